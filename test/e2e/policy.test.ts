/**
 * The per-caller policy (--policy) through the compiled binary in remote
 * mode, with a real issuer (oidc-provider's key signs the people's tokens,
 * with their roles under realm_access.roles) and a static CI token: each
 * caller sees and reaches exactly their grants — tools/list, calls,
 * resources, completions, presigned URLs, listings filtered to their
 * prefixes, bulk jobs checked object by object — and nothing of what others
 * may do; a reload mid-run, a broken file kept out, a broken file at start.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, closeSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tempDir } from "../helpers/files.ts";
import { connectHttp, type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { startIssuer, type TestIssuer } from "../helpers/oidc.ts";
import { runBinary } from "../helpers/raw-stdio.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

const CI_TOKEN = "ci-policy-token-0123456789abcdef";
const ALL_SCOPES = "s3:read s3:write s3:delete";

let issuer: TestIssuer;
let server: HttpBinary;
let resource: string;
let reports: string;
let finance: string;
let policyFile: string;
let auditFile: string;

/** A glob for this run's finance buckets alone (uniqueBucket: t-finance-<pid>-<time>-<n>): a store that kept an earlier run's must not widen the grant. */
const runPattern = (bucket: string) => `${bucket.slice(0, bucket.lastIndexOf("-") + 1)}*`;

function policy(extra = ""): string {
  return `# three roles and a CI bot
groups_claim: realm_access.roles
rules:
  - name: analysts read reports
    who: ["group:analysts"]
    access: read
    buckets: ["${reports}"]
    prefixes: [""]
    tools: ["*"]
  - name: alice writes team-a
    who: ["sub:alice"]
    access: write
    buckets: ["${reports}"]
    prefixes: ["team-a/"]
    tools: ["*"]
  - name: finance owns finance
    who: ["group:finance"]
    access: delete
    buckets: ["${runPattern(finance)}"]
    prefixes: [""]
    tools: ["*"]
  - name: ci publishes builds
    who: ["label:ci"]
    access: write
    buckets: ["${reports}"]
    prefixes: ["builds/"]
    tools: [put_object, list_objects, storage_usage]
  - name: dave reads team-a and one shared folder
    who: ["sub:dave"]
    access: read
    buckets: ["${reports}"]
    prefixes: ["team-a/", "shared/x/"]
    tools: [list_objects, list_object_versions, storage_usage, find_objects]
  - name: erin reads any report by name
    who: ["sub:erin"]
    access: read
    buckets: ["${reports}"]
    prefixes: [""]
    tools: [get_object]
  - name: erin lists only team-a
    who: ["sub:erin"]
    access: read
    buckets: ["${reports}"]
    prefixes: ["team-a/"]
    tools: [list_objects, list_buckets]
  - name: gina looks inside team-a
    who: ["sub:gina"]
    access: read
    buckets: ["${reports}"]
    prefixes: ["team-a/"]
    tools: [search_objects, inspect_object, get_object, query_objects]
${extra}`;
}

async function person(sub: string, roles: string[]): Promise<Client> {
  return connectHttp(
    server.url,
    await issuer.mint({ sub, scope: ALL_SCOPES, realm_access: { roles } }, { audience: resource }),
  );
}
const toolNames = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();

beforeAll(async () => {
  issuer = await startIssuer();
  reports = await freshBucket("reports");
  finance = await freshBucket("finance");
  for (const [bucket, key] of [
    [reports, "team-a/q3.csv"],
    [reports, "team-b/q3.csv"],
    [reports, "builds/v1.zip"],
    [finance, "ledger.csv"],
  ] as const) {
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `${bucket}/${key}` }));
  }
  policyFile = join(tempDir("policy"), "policy.yaml");
  writeFileSync(policyFile, policy());
  auditFile = join(tempDir("policy-audit"), "audit.jsonl");
  server = await startHttpBinary({
    env: {
      ...s3Env(),
      STORE_OAUTH_ISSUER: issuer.issuer,
      STORE_HTTP_TOKENS: `ci:${CI_TOKEN}`,
      STORE_AUDIT_LOG: auditFile,
    },
    args: ["--allow-delete", "--policy", policyFile],
  });
  resource = `http://localhost:${server.port}/mcp`;
}, 60_000);
afterAll(async () => {
  await server.stop();
  await issuer.stop();
});

describe("each caller gets exactly their grants", () => {
  test("alice (analyst, writes team-a/): reads reports, writes only team-a/, sees nothing of finance", async () => {
    const alice = await person("alice", ["analysts"]);
    try {
      const tools = await toolNames(alice);
      expect(tools).toContain("put_object");
      expect(tools).not.toContain("delete_object");
      expect(tools).not.toContain("create_bucket");
      const buckets = (await call(alice, "list_buckets", {})).structuredContent!.buckets.map(
        (b: { name: string }) => b.name,
      );
      expect(buckets).toEqual([reports]);
      expect(textOf(await call(alice, "get_object", { bucket_name: reports, object_key: "team-b/q3.csv" }))).toContain(
        `${reports}/team-b/q3.csv`,
      );
      const denied = await call(alice, "get_object", { bucket_name: finance, object_key: "ledger.csv" });
      expect(denied.isError).toBe(true);
      expect(textOf(denied)).toContain("PolicyDenied");
      expect(textOf(denied)).not.toContain("finance owns");
      expect(
        (await call(alice, "put_object", { bucket_name: reports, object_key: "team-a/new.txt", content: "a" })).isError,
      ).toBeFalsy();
      expect(
        textOf(await call(alice, "put_object", { bucket_name: reports, object_key: "team-b/new.txt", content: "b" })),
      ).toContain("PolicyDenied");
      // Presigned links: the same rules.
      expect(
        (await call(alice, "presign_url", { bucket_name: reports, object_key: "team-b/q3.csv" })).isError,
      ).toBeFalsy();
      expect(
        textOf(await call(alice, "presign_url", { bucket_name: reports, object_key: "team-b/x", method: "PUT" })),
      ).toContain("PolicyDenied");
      expect(textOf(await call(alice, "presign_url", { bucket_name: finance, object_key: "ledger.csv" }))).toContain(
        "PolicyDenied",
      );
      // Resources and completions.
      expect((await alice.readResource({ uri: `s3://${reports}/team-a/q3.csv` })).contents[0]).toMatchObject({
        text: `${reports}/team-a/q3.csv`,
      });
      await expect(alice.readResource({ uri: `s3://${finance}/ledger.csv` })).rejects.toThrow(/PolicyDenied/);
      const completed = await alice.complete({
        ref: { type: "ref/resource", uri: "s3://{bucket}/{+key}" },
        argument: { name: "bucket", value: "" },
      });
      expect(completed.completion.values).toEqual([reports]);
      // A bulk copy: read on the source and write on the destination, object by object.
      const copied = await call(alice, "copy_prefix", {
        source_bucket: reports,
        source_prefix: "team-b/",
        bucket_name: reports,
        prefix: "team-a/from-b/",
      });
      expect(copied.structuredContent, textOf(copied)).toMatchObject({ counts: { done: 1, failed: 0 } });
      const refused = await call(alice, "copy_prefix", {
        source_bucket: reports,
        source_prefix: "team-a/",
        bucket_name: reports,
        prefix: "team-c/",
      });
      expect(refused.structuredContent, textOf(refused)).toMatchObject({ counts: { done: 0 } });
      expect(refused.structuredContent!.counts.failed).toBeGreaterThan(0);
      expect(JSON.stringify(refused.structuredContent)).toContain("PolicyDenied");
    } finally {
      await alice.close();
    }
  });

  test("bob (finance): deletes in finance, sees nothing of reports", async () => {
    const bob = await person("bob", ["finance"]);
    try {
      expect(await toolNames(bob)).toContain("delete_object");
      expect(
        (await call(bob, "list_buckets", {})).structuredContent!.buckets.map((b: { name: string }) => b.name),
      ).toEqual([finance]);
      expect(textOf(await call(bob, "list_objects", { bucket_name: reports }))).toContain("PolicyDenied");
      await sdkClient().send(new PutObjectCommand({ Bucket: finance, Key: "old.csv", Body: "x" }));
      expect((await call(bob, "delete_object", { bucket_name: finance, object_key: "old.csv" })).isError).toBeFalsy();
    } finally {
      await bob.close();
    }
  });

  test("the CI token: only its three tools, only builds/ — listings outside it are empty, usage counts only it", async () => {
    const ci = await connectHttp(server.url, CI_TOKEN);
    try {
      // storage_usage can run long: the job tools come with it.
      expect(await toolNames(ci)).toEqual([
        "cancel_job",
        "job_status",
        "list_jobs",
        "list_objects",
        "put_object",
        "storage_usage",
      ]);
      expect(
        (await call(ci, "put_object", { bucket_name: reports, object_key: "builds/v2.zip", content: "zip" })).isError,
      ).toBeFalsy();
      const all = await call(ci, "list_objects", { bucket_name: reports });
      expect(all.structuredContent!.objects.map((o: { key: string }) => o.key).sort()).toEqual([
        "builds/v1.zip",
        "builds/v2.zip",
      ]);
      const folders = await call(ci, "list_objects", { bucket_name: reports, delimiter: "/" });
      expect(folders.structuredContent!.common_prefixes).toEqual(["builds/"]);
      expect(
        (await call(ci, "list_objects", { bucket_name: reports, prefix: "team-a/" })).structuredContent!.objects,
      ).toEqual([]);
      const usage = await call(ci, "storage_usage", { bucket_name: reports });
      expect(usage.structuredContent, textOf(usage)).toMatchObject({
        objects: 2,
        groups: [{ group: "builds/", objects: 2 }],
      });
      expect(textOf(await call(ci, "get_object", { bucket_name: reports, object_key: "builds/v1.zip" }))).toContain(
        "PolicyDenied: the policy has no rule giving label:ci the tool get_object",
      );
    } finally {
      await ci.close();
    }
  });

  test("dave (team-a/ and shared/x/ only): paging markers never name a hidden key, and markers the server did not make are refused", async () => {
    for (const key of [
      "team-a/1.txt",
      "team-a/2.txt",
      "team-b/secret-1.txt",
      "team-b/secret-2.txt",
      "shared/x/y.txt",
      "shared/z-hidden.txt",
      "top-hidden.txt",
    ]) {
      await sdkClient().send(new PutObjectCommand({ Bucket: reports, Key: key, Body: key }));
    }
    const dave = await person("dave", []);
    try {
      const seen: string[] = [];
      let token: string | undefined;
      for (let i = 0; i < 20; i++) {
        const page = await call(dave, "list_objects", {
          bucket_name: reports,
          max_keys: 1,
          ...(token ? { continuation_token: token } : {}),
        });
        expect(page.isError, textOf(page)).toBeFalsy();
        const body = JSON.stringify(page);
        for (const hidden of ["team-b", "builds/", "shared/z", "top-hidden"]) expect(body).not.toContain(hidden);
        // A marker names no key in the clear, visible or not (Ceph RGW's own token is the plain key).
        if (page.structuredContent!.next_continuation_token)
          expect(
            atob(page.structuredContent!.next_continuation_token.slice(4).replace(/-/g, "+").replace(/_/g, "/")),
          ).not.toMatch(/team-b|builds|hidden/);
        seen.push(...page.structuredContent!.objects.map((o: { key: string }) => o.key));
        token = page.structuredContent!.next_continuation_token ?? undefined;
        if (!page.structuredContent!.is_truncated) break;
      }
      expect(seen.filter((k) => !k.startsWith("team-a/from-b/") && k !== "team-a/new.txt")).toEqual([
        "shared/x/y.txt",
        "team-a/1.txt",
        "team-a/2.txt",
        "team-a/q3.csv",
      ]);
      const folders = await call(dave, "list_objects", { bucket_name: reports, delimiter: "/" });
      expect(folders.structuredContent).toMatchObject({
        objects: [],
        common_prefixes: ["shared/", "team-a/"],
        is_truncated: false,
      });
      const inShared = await call(dave, "list_objects", { bucket_name: reports, prefix: "shared/", delimiter: "/" });
      expect(inShared.structuredContent).toMatchObject({ objects: [], common_prefixes: ["shared/x/"] });
      // Versions: the store's next_key_marker is the last key of its page, hidden or not.
      const versions: string[] = [];
      let keyMarker: string | undefined;
      let versionMarker: string | undefined;
      for (let i = 0; i < 20; i++) {
        const page = await call(dave, "list_object_versions", {
          bucket_name: reports,
          max_keys: 1,
          ...(keyMarker ? { key_marker: keyMarker } : {}),
          ...(versionMarker ? { version_id_marker: versionMarker } : {}),
        });
        expect(page.isError, textOf(page)).toBeFalsy();
        for (const hidden of ["team-b", "builds/", "shared/z", "top-hidden"])
          expect(JSON.stringify(page)).not.toContain(hidden);
        versions.push(...page.structuredContent!.versions.map((v: { key: string }) => v.key));
        if (!page.structuredContent!.is_truncated) break;
        keyMarker = page.structuredContent!.next_key_marker;
        versionMarker = page.structuredContent!.next_version_id_marker ?? undefined;
      }
      expect(versions).toContain("team-a/1.txt");
      expect(versions).toContain("shared/x/y.txt");
      // Markers the caller made up: the store's own kind (a plain key), one naming a hidden key, garbage.
      const forged = `pm1.${Buffer.from(JSON.stringify({ k: "team-b/" })).toString("base64url")}`;
      for (const bad of ["team-b/secret-1.txt", forged, "pm1.!!"]) {
        const refused = await call(dave, "list_objects", { bucket_name: reports, continuation_token: bad });
        expect(refused.isError, bad).toBe(true);
        expect(textOf(refused), bad).toContain("InvalidContinuationToken");
        expect(
          textOf(await call(dave, "list_object_versions", { bucket_name: reports, key_marker: bad })),
          bad,
        ).toContain("InvalidContinuationToken");
      }
      // Bulk reads see the same view: usage and search count only the granted prefixes.
      const usage = await call(dave, "storage_usage", { bucket_name: reports });
      expect(JSON.stringify(usage.structuredContent), textOf(usage)).not.toMatch(/team-b|builds|hidden/);
      const found = await call(dave, "find_objects", { bucket_name: reports, glob: "**/secret*" });
      expect(found.isError, textOf(found)).toBeFalsy();
      expect(JSON.stringify(found)).not.toContain("secret-1");
    } finally {
      await dave.close();
    }
  });

  test("erin (get_object anywhere, listings only in team-a/): completions and resources/list list through the listing rules, each with an audit line", async () => {
    const erin = await person("erin", []);
    try {
      expect(await toolNames(erin)).toEqual([
        "cancel_job",
        "get_object",
        "job_status",
        "list_buckets",
        "list_jobs",
        "list_objects",
      ]);
      const keys = await erin.complete({
        ref: { type: "ref/resource", uri: "s3://{bucket}/{+key}" },
        argument: { name: "key", value: "" },
        context: { arguments: { bucket: reports } },
      });
      expect(keys.completion.values).toEqual(["team-a/"]);
      const inside = await erin.complete({
        ref: { type: "ref/resource", uri: "s3://{bucket}/{+key}" },
        argument: { name: "key", value: "team-" },
        context: { arguments: { bucket: reports } },
      });
      expect(inside.completion.values).toEqual(["team-a/"]);
      const listed = (await erin.listResources()).resources.filter((r) => r.uri.startsWith("s3://")).map((r) => r.name);
      expect(listed.length).toBeGreaterThan(0);
      for (const name of listed) expect(name, JSON.stringify(listed)).toStartWith("team-a/");
      // get_object still reads by name beyond what erin may list.
      expect(
        (await call(erin, "get_object", { bucket_name: reports, object_key: "team-b/q3.csv" })).isError,
      ).toBeFalsy();
    } finally {
      await erin.close();
    }
    const lines = readFileSync(auditFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((l) => l.caller === "sub:erin");
    expect(
      lines.filter((l) => l.action === "completion/complete").map((l) => [l.bucket, l.prefix, l.returned, l.outcome]),
    ).toEqual([
      [reports, "", 1, "ok"],
      [reports, "team-", 1, "ok"],
    ]);
    expect(lines.find((l) => l.action === "resources/list")).toMatchObject({
      outcome: "ok",
      returned: expect.any(Number),
    });
  });

  test("a caller no rule names gets no tool, and a call anyway is refused", async () => {
    const mallory = await person("mallory", []);
    try {
      expect(await toolNames(mallory)).toEqual([]);
      expect(textOf(await call(mallory, "list_buckets", {}))).toContain(
        "PolicyDenied: the policy has no rule giving sub:mallory the tool list_buckets",
      );
    } finally {
      await mallory.close();
    }
  });
});

describe("looking inside objects under a policy", () => {
  test("gina (team-a/ only): search_objects and query_objects never read a hidden prefix; inspect_object, archive members and named keys are refused outside team-a/", async () => {
    await sdkClient().send(
      new PutObjectCommand({ Bucket: reports, Key: "team-a/log.txt", Body: "ok\nneedle in team-a\n" }),
    );
    await sdkClient().send(
      new PutObjectCommand({ Bucket: reports, Key: "team-b/log.txt", Body: "needle in team-b\n" }),
    );
    const gina = await person("gina", []);
    try {
      // search_objects can run long: the job tools come with it.
      expect(await toolNames(gina)).toEqual([
        "cancel_job",
        "get_object",
        "inspect_object",
        "job_status",
        "list_jobs",
        "query_objects",
        "search_objects",
      ]);
      // The whole bucket asked for: only what she may read is listed, so only that is searched.
      const all = await call(gina, "search_objects", { bucket_name: reports, prefix: "", pattern: "needle" });
      expect(all.isError, textOf(all)).toBeFalsy();
      expect(all.structuredContent!.matches.map((m: { key: string; line: number }) => `${m.key}:${m.line}`)).toEqual([
        "team-a/log.txt:2",
      ]);
      expect(JSON.stringify(all.structuredContent)).not.toContain("team-b");
      // A query over the whole bucket reads what she may list, and only that; a hidden key named outright is refused.
      const rows = await call(gina, "query_objects", {
        bucket_name: reports,
        prefix: "",
        include: ["*.txt"],
        sql: "SELECT _key, count(*) FROM objects GROUP BY _key",
      });
      expect(rows.isError, textOf(rows)).toBeFalsy();
      expect(rows.structuredContent!.rows).toEqual([["team-a/log.txt", 1]]);
      const named = await call(gina, "query_objects", {
        bucket_name: reports,
        keys: ["team-a/log.txt", "team-b/log.txt"],
        sql: "SELECT count(*) FROM objects",
      });
      expect(named.isError).toBe(true);
      expect(textOf(named)).toContain("PolicyDenied");
      expect(
        (await call(gina, "inspect_object", { bucket_name: reports, object_key: "team-a/q3.csv" })).isError,
      ).toBeFalsy();
      for (const [tool, args] of [
        ["inspect_object", { object_key: "team-b/q3.csv" }],
        ["inspect_object", { object_key: "team-b/q3.csv", archive_member: "x" }],
        ["get_object", { object_key: "team-b/q3.csv", archive_member: "x" }],
      ] as const) {
        const refused = await call(gina, tool, { bucket_name: reports, ...args });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain("PolicyDenied");
      }
    } finally {
      await gina.close();
    }
  });
});

describe("servers kept between requests (remote.ts's pool)", () => {
  test("a crowd of concurrent requests from callers with different grants: each request is answered as its own caller", async () => {
    const callers = [
      await person("alice", ["analysts"]),
      await person("bob", ["finance"]),
      await person("mallory", []),
      await connectHttp(server.url, CI_TOKEN),
    ];
    try {
      const seen = async (c: Client) => {
        const listed = await call(c, "list_buckets", {});
        return JSON.stringify([
          await toolNames(c),
          listed.isError
            ? textOf(listed).slice(0, 60)
            : listed.structuredContent!.buckets.map((b: { name: string }) => b.name),
        ]);
      };
      // Each caller alone first: what their own server answers.
      const alone: string[] = [];
      for (const c of callers) alone.push(await seen(c));
      expect(new Set(alone).size).toBe(callers.length);
      // Then all at once, many times over: requests land on servers other callers' requests just closed.
      const rounds = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          seen(callers[i % callers.length]!).then((got) => [i % callers.length, got] as const),
        ),
      );
      for (const [who, got] of rounds) expect(got).toBe(alone[who]!);
    } finally {
      await Promise.all(callers.map((c) => c.close()));
    }
  });
});

describe("reloads", () => {
  test("a changed file applies to the next request; a broken one is logged and the policy in force stays", async () => {
    writeFileSync(
      policyFile,
      policy(`  - name: mallory reads builds
    who: ["sub:mallory"]
    access: read
    buckets: ["${reports}"]
    prefixes: ["builds/"]
    tools: ["*"]
`),
    );
    const deadline = Date.now() + 5_000;
    while (!server.stderr().includes("reloaded (the file changed): 9 rule(s)") && Date.now() < deadline)
      await Bun.sleep(20);
    const mallory = await person("mallory", []);
    try {
      expect(await toolNames(mallory)).toContain("list_objects");
      expect(
        (await call(mallory, "list_objects", { bucket_name: reports })).structuredContent!.objects.map(
          (o: { key: string }) => o.key,
        ),
      ).toEqual(["builds/v1.zip", "builds/v2.zip"]);
      writeFileSync(policyFile, "rules: [ {who: nobody} ");
      server.proc.kill("SIGHUP");
      const until = Date.now() + 5_000;
      while (!server.stderr().includes("not reloaded (SIGHUP)") && Date.now() < until) await Bun.sleep(20);
      expect(server.stderr()).toContain("the previous policy stays in force");
      expect(await toolNames(mallory)).toContain("list_objects");
    } finally {
      await mallory.close();
    }
  });
});

describe("a file caught half-written never widens anyone's view", () => {
  /** Lists shared/ as dave, again and again while `write` runs, and returns every key he was ever shown. */
  async function watchDave(write: () => Promise<void>): Promise<Set<string>> {
    const dave = await person("dave", []);
    const shown = new Set<string>();
    let writing = true;
    const poll = (async () => {
      while (writing) {
        const page = await call(dave, "list_objects", { bucket_name: reports, prefix: "shared/" });
        for (const o of page.structuredContent?.objects ?? []) shown.add(o.key);
        await Bun.sleep(25);
      }
    })();
    try {
      await write();
    } finally {
      writing = false;
      await poll;
      await dave.close();
    }
    return shown;
  }
  const daveShared = (prefixes: string) => `  - name: dave reads shared
    who: ["sub:dave"]
    access: read
    buckets: ["${reports}"]
    tools: [list_objects]
    prefixes:
${prefixes}`;

  test("rewritten in place in two slow halves, the half cut inside a prefix is never taken", async () => {
    for (const key of ["shared/x/y.txt", "shared/z-hidden.txt", "shared/y/granted.txt"])
      await sdkClient().send(new PutObjectCommand({ Bucket: reports, Key: key, Body: key }));
    const full = policy(daveShared("      - shared/y/\n"));
    const cut = full.indexOf("shared/y/") + "sha".length;
    const shown = await watchDave(async () => {
      const fd = openSync(policyFile, "w");
      writeSync(fd, full.slice(0, cut));
      await Bun.sleep(600);
      writeSync(fd, full.slice(cut));
      closeSync(fd);
      await Bun.sleep(2_500);
    });
    expect([...shown].sort()).toEqual(["shared/x/y.txt", "shared/y/granted.txt"]);
  }, 30_000);

  test("appended line by line, no partial rule ever applies; a rule without its narrowing lines is refused", async () => {
    const before = policy();
    writeFileSync(policyFile, before);
    await Bun.sleep(2_500);
    const lines = daveShared("      - shared/y/\n").split("\n");
    const shown = await watchDave(async () => {
      for (const line of lines) {
        appendFileSync(policyFile, `${line}\n`);
        await Bun.sleep(300);
      }
      await Bun.sleep(2_500);
    });
    expect([...shown].sort()).toEqual(["shared/x/y.txt", "shared/y/granted.txt"]);
    // A rule with no buckets, prefixes or tools line would mean "everything": it is refused, naming the field.
    const widening = `rules:\n  - who: ["sub:dave"]\n    access: read\n`;
    writeFileSync(policyFile, widening);
    server.proc.kill("SIGHUP");
    const until = Date.now() + 5_000;
    while (!server.stderr().includes("rules.0.buckets") && Date.now() < until) await Bun.sleep(20);
    expect(server.stderr()).toContain("rules.0.buckets");
    expect(server.stderr()).toContain("rules.0.prefixes");
    expect(server.stderr()).toContain("rules.0.tools");
  }, 30_000);
});

test("a policy file with problems stops the start, listing each", () => {
  const file = join(tempDir("bad-policy"), "policy.json");
  writeFileSync(
    file,
    JSON.stringify({
      rules: [
        { who: ["boss"], access: "all" },
        { who: ["*"], access: "read", tools: ["teleport"], stores: ["mars"] },
      ],
    }),
  );
  const out = runBinary(["--transport", "http", "--listen", "127.0.0.1:18999", "--policy", file], s3Env());
  expect(out.exitCode).toBe(1);
  expect(out.stderr).toContain("cannot start, the policy");
  expect(out.stderr).toContain("rules.0.who.0");
  expect(out.stderr).toContain("rules.0.access");
  const second = JSON.stringify({
    rules: [{ who: ["*"], access: "read", buckets: ["*"], prefixes: [""], tools: ["teleport"], stores: ["mars"] }],
  });
  writeFileSync(file, second);
  const again = runBinary(["--transport", "http", "--listen", "127.0.0.1:18999", "--policy", file], s3Env());
  expect(again.stderr).toContain('"teleport" is neither a tool nor a group');
  expect(again.stderr).toContain('"mars" is not a configured store');
  // Over stdio there is one local user: a policy is refused.
  expect(runBinary(["--policy", file], s3Env()).stderr).toContain("applies to remote mode");
});
