/**
 * Several stores in one server, through the compiled binary: Ceph RGW with two
 * users (each its own buckets) as two stores, plus one whose key is wrong;
 * the environment form and AWS profiles from a throwaway config file; each
 * store's own read-only and allowlist; errors naming the store; no secret of
 * any store in a log or a result; one store as before. Copies between stores
 * are in stores-copies.test.ts and stores-copy-prefix.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HeadObjectCommand } from "@aws-sdk/client-s3";

import { tempDir } from "../helpers/files.ts";

import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { runBinary } from "../helpers/raw-stdio.ts";

import { s3, s3Env, sdkClient, uniqueBucket } from "../helpers/s3.ts";
import { BROKEN_SECRET, otherClient, severalEnv, storeBuckets } from "../helpers/several-stores.ts";

let ours: string;
let theirs: string;
beforeAll(async () => {
  ({ ours, theirs } = await storeBuckets());
});

describe("several stores from the environment", () => {
  let session: Awaited<ReturnType<typeof connectBinary>>;
  beforeAll(async () => {
    session = await connectBinary({
      env: severalEnv({ STORE_OTHER_READ_ONLY: "true", RUST_LOG: "debug" }),
      args: ["--allow-delete"],
    });
  });
  afterAll(() => session.close());

  test("every tool takes store (the stores as an enum); list_stores describes them and shows no credential", async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toContain("list_stores");
    for (const tool of tools) {
      // list_stores is about every store: it takes none.
      const store = (
        tool.inputSchema.properties as Record<string, { enum?: string[]; description?: string }> | undefined
      )?.store;
      // So are the job tools: a job id names its store already.
      const storeless = ["list_stores", "job_status", "cancel_job", "list_jobs"].includes(tool.name);
      expect([tool.name, store?.enum]).toEqual([tool.name, storeless ? undefined : ["default", "other", "broken"]]);
      expect(tool.inputSchema.required ?? []).not.toContain("store");
      // The first store is "default": no "(default default)".
      if (store) expect(store.description).not.toContain("default default");
    }
    // A tool without parameters says so when handed one, once per connection for the same extra argument.
    const extra = await call(session.client, "list_stores", { wait_for_previous: true });
    expect(textOf(extra)).toContain("It takes no parameters.");
    expect(textOf(await call(session.client, "list_stores", { wait_for_previous: true }))).not.toContain(
      "Ignored parameter",
    );
    const listed = await call(session.client, "list_stores", {});
    expect(
      listed.structuredContent!.stores.map((s: { name: string; default: boolean; read_only: boolean }) => [
        s.name,
        s.default,
        s.read_only,
      ]),
    ).toEqual([
      ["default", true, false],
      ["other", false, true],
      ["broken", false, false],
    ]);
    expect(listed.structuredContent!.stores[1]).toMatchObject({
      endpoint: new URL(s3().endpoint).host,
      aws: false,
      region: "us-east-1",
    });
    const all = JSON.stringify(listed);
    for (const secret of [s3().secretAccessKey, s3().other!.secretAccessKey, BROKEN_SECRET, s3().other!.accessKeyId])
      expect(all).not.toContain(secret);
  });

  test("each call works on its own store: the other user's bucket through store other, ours through the default", async () => {
    const read = await call(session.client, "get_object", {
      bucket_name: theirs,
      object_key: "note.txt",
      store: "other",
    });
    expect(read.structuredContent!.text).toBe("from the other store");
    const mine = await call(session.client, "list_buckets", {});
    const names = mine.structuredContent!.buckets.map((b: { name: string }) => b.name);
    expect(names).toContain(ours);
    expect(names).not.toContain(theirs);
    // The other user's buckets (other test files running beside this one may add theirs), none of ours.
    const theirList = await call(session.client, "list_buckets", { store: "other" });
    const theirNames = theirList.structuredContent!.buckets.map((b: { name: string }) => b.name);
    expect(theirNames).toContain(theirs);
    expect(theirNames).not.toContain(ours);
  });

  test("errors name the store; a bucket not found says which stores exist", async () => {
    const missing = uniqueBucket("nowhere");
    const r = await call(session.client, "list_objects", { bucket_name: missing, store: "other" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`other:s3://${missing}: NoSuchBucket`);
    expect(textOf(r)).toContain("the other stores are default, broken");
  });

  test("a store with a wrong key fails alone, and says so; the others keep working", async () => {
    const bad = await call(session.client, "list_buckets", { store: "broken" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^broken:s3: (InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied)/);
    expect(textOf(bad)).not.toContain(BROKEN_SECRET);
    const good = await call(session.client, "list_buckets", { store: "default" });
    expect(good.isError).toBeFalsy();
  });

  test("a read-only store is never written, whatever the others allow", async () => {
    const refused = await call(session.client, "put_object", {
      bucket_name: theirs,
      object_key: "new.txt",
      content: "x",
      store: "other",
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("ReadOnlyMode");
    expect(textOf(refused)).toContain("(store other)");
    await expect(otherClient().send(new HeadObjectCommand({ Bucket: theirs, Key: "new.txt" }))).rejects.toThrow();
    const deleted = await call(session.client, "delete_object", {
      bucket_name: theirs,
      object_key: "note.txt",
      store: "other",
    });
    expect(textOf(deleted)).toContain("ReadOnlyMode");
    const written = await call(session.client, "put_object", {
      bucket_name: ours,
      object_key: "new.txt",
      content: "x",
    });
    expect(written.isError).toBeFalsy();
    expect((await sdkClient().send(new HeadObjectCommand({ Bucket: ours, Key: "new.txt" }))).ContentLength).toBe(1);
  });

  test("an unknown store is refused naming the stores", async () => {
    const r = await call(session.client, "list_buckets", { store: "nope" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("default");
    expect(textOf(r)).toContain("other");
  });

  test("resources: s3:// URIs read the default store, store://NAME/bucket/key the others; store names complete", async () => {
    const read = await session.client.readResource({ uri: `store://other/${theirs}/note.txt` });
    expect(read.contents[0]).toMatchObject({ uri: `store://other/${theirs}/note.txt`, text: "from the other store" });
    await expect(session.client.readResource({ uri: `s3://${theirs}/note.txt` })).rejects.toThrow(
      /AccessDenied|NoSuchBucket/,
    );
    for (const name of ["nope", "constructor", "__proto__"])
      await expect(session.client.readResource({ uri: `store://${name}/${theirs}/note.txt` })).rejects.toThrow(
        /UnknownStore/,
      );
    const names = await session.client.complete({
      ref: { type: "ref/resource", uri: "store://{store}/{bucket}/{+key}" },
      argument: { name: "store", value: "o" },
    });
    expect(names.completion.values).toEqual(["other"]);
    const buckets = await session.client.complete({
      ref: { type: "ref/resource", uri: "store://{store}/{bucket}/{+key}" },
      argument: { name: "bucket", value: theirs.slice(0, -1) },
      context: { arguments: { store: "other" } },
    });
    expect(buckets.completion.values).toEqual([theirs]);
  });

  test("no secret of any store reaches the log (debug level)", () => {
    const log = session.stderr();
    expect(log).toContain("other: ");
    for (const secret of [s3().secretAccessKey, s3().other!.secretAccessKey, BROKEN_SECRET])
      expect(log).not.toContain(secret);
  });
});

describe("stores from AWS profiles", () => {
  test("--profile and STORE_PROFILES=* make stores of profiles with their endpoint_url (direct or in a services section), region and keys", async () => {
    const dir = tempDir("profiles");
    const server = s3();
    writeFileSync(
      join(dir, "config"),
      [
        "[profile ceph-other]",
        `endpoint_url = ${server.endpoint}`,
        "region = us-east-1",
        "",
        "[profile ceph-svc]",
        "region = us-east-1",
        "services = local-ceph",
        "",
        "[services local-ceph]",
        "s3 =",
        `  endpoint_url = ${server.endpoint}`,
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "credentials"),
      [
        `[ceph-other]`,
        `aws_access_key_id = ${server.other!.accessKeyId}`,
        `aws_secret_access_key = ${server.other!.secretAccessKey}`,
        "",
        `[ceph-svc]`,
        `aws_access_key_id = ${server.accessKeyId}`,
        `aws_secret_access_key = ${server.secretAccessKey}`,
        "",
      ].join("\n"),
    );
    const env = { AWS_CONFIG_FILE: join(dir, "config"), AWS_SHARED_CREDENTIALS_FILE: join(dir, "credentials") };
    // Only profiles: the first is the default store.
    const profiles = await connectBinary({ env, args: ["--profile", "ceph-other", "--profile", "ceph-svc"] });
    try {
      const stores = await call(profiles.client, "list_stores", {});
      expect(
        stores.structuredContent!.stores.map((s: { name: string; credentials_from: string }) => [
          s.name,
          s.credentials_from,
        ]),
      ).toEqual([
        ["ceph-other", "AWS profile ceph-other"],
        ["ceph-svc", "AWS profile ceph-svc"],
      ]);
      const theirList = await call(profiles.client, "list_buckets", {});
      const theirNames = theirList.structuredContent!.buckets.map((b: { name: string }) => b.name);
      expect(theirNames).toContain(theirs);
      expect(theirNames).not.toContain(ours);
      const mine = await call(profiles.client, "list_buckets", { store: "ceph-svc" });
      expect(mine.structuredContent!.buckets.map((b: { name: string }) => b.name)).toContain(ours);
    } finally {
      await profiles.close();
    }
    // Beside the STORE_* store, every profile.
    const all = await connectBinary({ env: { ...s3Env(), ...env, STORE_PROFILES: "*" } });
    try {
      const stores = await call(all.client, "list_stores", {});
      expect(stores.structuredContent!.stores.map((s: { name: string }) => s.name)).toEqual([
        "default",
        "ceph-other",
        "ceph-svc",
      ]);
    } finally {
      await all.close();
    }
  });
});

describe("configuration", () => {
  test("problems of every store are reported at once, naming the store, without echoing a secret", async () => {
    const r = await runBinary([], {
      ...s3Env(),
      STORE_STORES: "half,Bad Name,default",
      STORE_HALF_SECRET_ACCESS_KEY: "halfsecret00000000000000000000000000000",
      STORE_HALF_ENDPOINT_URL: "ftp://nowhere",
      STORE_PROFILES: "no-such-profile",
      AWS_CONFIG_FILE: "/nonexistent",
      AWS_SHARED_CREDENTIALS_FILE: "/nonexistent",
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("store half: give both STORE_HALF_ACCESS_KEY_ID and STORE_HALF_SECRET_ACCESS_KEY");
    expect(r.stderr).toContain("store half: STORE_HALF_ENDPOINT_URL: endpoint URL");
    expect(r.stderr).toContain('"Bad Name" is not a store name');
    expect(r.stderr).toContain('"default" is the name of the store STORE_* and the flags configure');
    expect(r.stderr).toContain('store no-such-profile: no profile "no-such-profile"');
    expect(r.stderr).not.toContain("halfsecret");
  });

  test("one store: no store parameter and no list_stores, as before", async () => {
    const one = await connectBinary({ env: s3Env() });
    try {
      const { tools } = await one.client.listTools();
      expect(tools.map((t) => t.name)).not.toContain("list_stores");
      for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain("store");
    } finally {
      await one.close();
    }
  });
});

describe("doctor with several stores", () => {
  test("checks every store in a section of its own, or only the one --store names", () => {
    const all = runBinary(["doctor"], severalEnv());
    expect(all.exitCode).toBe(1); // the broken store fails
    expect(all.stdout).toContain("✓ default: list buckets");
    // The other user's buckets: this file's, and any that test files running beside it made.
    expect(all.stdout).toMatch(/✓ other: list buckets: [1-9]\d* bucket\(s\) visible/);
    expect(all.stdout).toMatch(/✗ broken: list buckets: .*(InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied)/);
    expect(all.stdout).not.toContain(BROKEN_SECRET);
    const one = runBinary(["doctor", "--store", "other"], severalEnv());
    expect(one.exitCode).toBe(0);
    expect(one.stdout).toContain("✓ other: list buckets");
    expect(one.stdout).not.toContain("default:");
    const unknown = runBinary(["doctor", "--store", "nope"], severalEnv());
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stdout).toContain('no store named "nope" (the stores are default, other, broken)');
  });
});
