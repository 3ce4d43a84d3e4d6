/** Allowed directories that would open too much, and secrets that could leak, through the compiled binary. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type FakeS3, fakeEnv, startFakeS3, xml } from "../helpers/fake-s3.ts";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { INITIALIZE, INITIALIZED, rawSession, runBinary } from "../helpers/raw-stdio.ts";
import { s3Env } from "../helpers/s3.ts";

describe("allowed directories", () => {
  test("an empty --allowed-dir is a configuration error, in either spelling", () => {
    for (const args of [["--allowed-dir", ""], ["--allowed-dir="]]) {
      const r = runBinary(args, s3Env());
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain("empty");
      expect(r.stdout).toBe("");
    }
  });

  test("/, the home directory, its ancestors and system directories are refused unless --allow-broad-dirs", () => {
    const home = tempDir("home");
    for (const [args, cwd] of [
      [["--allowed-dir", "."], "/"],
      [["--allowed-dir", "/etc"], undefined],
      [["--allowed-dir", home], undefined],
      [["--allowed-dir", dirname(home)], undefined],
      [["--allowed-dir", "/usr"], undefined],
    ] as const) {
      const r = runBinary([...args], { ...s3Env(), HOME: home }, cwd);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain("too broad");
      expect(r.stderr).toContain("--allow-broad-dirs");
    }
    const opted = runBinary(["--allowed-dir", "/etc", "--allow-broad-dirs"], s3Env());
    expect(opted.exitCode).toBe(0);
  });

  test("the working-directory default follows the same rule: ~/.aws/credentials cannot be uploaded from home or /etc", async () => {
    const home = tempDir("home-default");
    mkdirSync(join(home, ".aws"));
    writeFileSync(join(home, ".aws", "credentials"), "[default]\naws_secret_access_key = nope\n");
    for (const cwd of [home, dirname(home), "/etc"]) {
      const { client, close } = await connectBinary({ env: { ...s3Env(), HOME: home }, cwd });
      try {
        const r = await call(client, "upload_file", {
          local_file_path: join(home, ".aws", "credentials"),
          bucket_name: "any",
          object_key: "stolen",
        });
        expect(r.isError).toBe(true);
        expect(textOf(r)).toContain("LocalFilesDisabled");
        expect(textOf(r)).toContain("too broad");
      } finally {
        await close();
      }
    }
  });
});

describe("secrets", () => {
  let fake: FakeS3;
  beforeAll(async () => {
    fake = await startFakeS3();
  });
  afterAll(() => fake.stop());

  test("configuration errors never echo a secret: URL userinfo (even unparseable), stray values", () => {
    const secret = "EndpointPassw0rd-do-not-print";
    for (const url of [
      `http://user:${secret}@exa mple.com`,
      `ftp://user:${secret}@example.com`,
      `user:${secret}@example.com`,
    ]) {
      const r = runBinary(["--endpoint-url", url], s3Env());
      expect(r.exitCode).toBe(1);
      expect(r.stderr).not.toContain(secret);
    }
    // AWS secrets carry "/" and "+": the userinfo of an unparseable URL is masked whole, wherever a URL is echoed.
    const awsLike = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    const halves = awsLike.split("/");
    const variables = ["STORE_ENDPOINT_URL", "STORE_OAUTH_ISSUER", "STORE_RESOURCE_URL", "STORE_OAUTH_JWKS_URL"];
    for (const url of [
      `http://AKIDEXAMPLE:${awsLike}@host:99999`,
      `https://AKIDEXAMPLE:${awsLike}@host:99999/path`,
      `http://AKIDEXAMPLE:${awsLike}@two@host:1`,
      `AKIDEXAMPLE:${awsLike}@host:9000`,
    ]) {
      for (const name of variables) {
        const env = {
          ...s3Env(),
          STORE_SECRET_ACCESS_KEY: s3Env().STORE_SECRET_ACCESS_KEY!,
          [name]: url,
          ...(name === "STORE_OAUTH_JWKS_URL" ? { STORE_OAUTH_ISSUER: "http://127.0.0.1:1" } : {}),
        };
        const r = runBinary(["--transport", "http"], env);
        expect(r.exitCode, `${name}=${url}`).toBe(1);
        for (const part of halves) expect(r.stderr, `${name}=${url}`).not.toContain(part);
      }
      const flag = runBinary(["--endpoint-url", url], s3Env());
      for (const part of halves) expect(flag.stderr, url).not.toContain(part);
      const doctor = runBinary(["doctor", "--endpoint-url", url], s3Env());
      expect(doctor.exitCode).toBe(1);
      for (const part of halves) expect(doctor.stdout + doctor.stderr, url).not.toContain(part);
    }
    const stray = runBinary(["--secret-acess-key", "TypoedSecretValue-123456"], s3Env());
    expect(stray.exitCode).toBe(1);
    expect(stray.stderr).not.toContain("TypoedSecretValue-123456");
    const flagged = runBinary(["--secret-access-key", "RealSecretValue-987654", "--region", "not a region!"], {
      ...s3Env(),
      STORE_SECRET_ACCESS_KEY: "",
    });
    expect(flagged.exitCode).toBe(1);
    expect(flagged.stderr).not.toContain("RealSecretValue-987654");
  });

  test("debug call logs escape and scrub model-supplied keys: no forged line, no secret", async () => {
    const env = fakeEnv(fake);
    fake.handle(() => ({ status: 404, body: xml("<Error><Code>NoSuchKey</Code></Error>") }));
    const key = `logs/${env.STORE_SECRET_ACCESS_KEY}\nFORGED store_mcp_server: admin logged in`;
    const run = await rawSession(["--log-level", "debug"], env, [
      INITIALIZE,
      INITIALIZED,
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "get_object", arguments: { bucket_name: "b", object_key: key } },
      },
    ]);
    expect(run.stderr).toContain("get_object");
    expect(run.stderr).not.toContain(env.STORE_SECRET_ACCESS_KEY!);
    expect(run.stderr.split("\n").some((line) => line.startsWith("FORGED"))).toBe(false);
  });

  test("encoded session tokens, AWS_* and profile credentials, and whole key ids are scrubbed from results", async () => {
    const token = "FwoGZXIvYXdzE/token+with=special/chars";
    const profileSecret = "ProfileOnlySecret/abc+def=ghi0123";
    const home = tempDir("profile");
    mkdirSync(join(home, ".aws"));
    writeFileSync(
      join(home, ".aws", "credentials"),
      `[default]\naws_access_key_id = AKIAPROFILEKEY000042\naws_secret_access_key = ${profileSecret}\n`,
    );
    fake.handle(() => ({
      status: 403,
      // A code the server does not know, so the store's message is echoed (known codes get our own wording).
      body: xml(
        `<Error><Code>TokenTrouble</Code><Message>denied for ${encodeURIComponent(token)} ${encodeURIComponent(profileSecret)} ${profileSecret} key AKIAPROFILEKEY000042 AKIASTOREKEYID000042</Message></Error>`,
      ),
    }));
    const withToken = await connectBinary({
      env: { ...fakeEnv(fake), STORE_ACCESS_KEY_ID: "AKIASTOREKEYID000042", STORE_SESSION_TOKEN: token },
    });
    try {
      const text = textOf(await call(withToken.client, "list_buckets"));
      expect(text).toContain("TokenTrouble");
      expect(text).toContain("denied for");
      expect(text).not.toContain(encodeURIComponent(token));
      expect(text).not.toContain("AKIASTOREKEYID000042");
    } finally {
      await withToken.close();
    }
    const fromProfile = await connectBinary({
      env: {
        STORE_ENDPOINT_URL: fake.endpoint,
        STORE_REGION: "us-east-1",
        HOME: home,
        AWS_EC2_METADATA_DISABLED: "true",
      },
    });
    try {
      const text = textOf(await call(fromProfile.client, "list_buckets"));
      expect(text).toContain("TokenTrouble");
      expect(text).toContain("denied for");
      for (const leaked of [profileSecret, encodeURIComponent(profileSecret), "AKIAPROFILEKEY000042"])
        expect(text).not.toContain(leaked);
    } finally {
      await fromProfile.close();
    }
  });
});

describe("secrets that are not secret, and secrets sent in clear (hardening, fifth round)", () => {
  const STORE_SSE_C_KEY = Buffer.alloc(32, 7).toString("base64");

  test("an SSE-C key with a plain-HTTP endpoint that is not loopback stops the start, saying why; loopback is allowed", () => {
    const far = runBinary([], { ...s3Env(), STORE_ENDPOINT_URL: "http://s3.example.invalid:9000", STORE_SSE_C_KEY });
    expect(far.exitCode).toBe(1);
    expect(far.stderr).toContain("SSE-C");
    expect(far.stderr).toContain("in clear");
    expect(far.stderr).not.toContain(STORE_SSE_C_KEY);
    const named = runBinary([], {
      ...s3Env(),
      STORE_STORES: "far",
      STORE_FAR_ENDPOINT_URL: "http://s3.example.invalid:9000",
      STORE_FAR_ACCESS_KEY_ID: "AKIAFAR",
      STORE_FAR_SECRET_ACCESS_KEY: "far-secret",
      STORE_FAR_SSE_C_KEY: STORE_SSE_C_KEY,
    });
    expect(named.exitCode).toBe(1);
    expect(named.stderr).toContain("store far");
    const near = runBinary([], { ...s3Env(), STORE_SSE_C_KEY });
    expect(near.exitCode, near.stderr).toBe(0);
  });

  test("with OAuth and no shared secret, replicas sharing a state store are told to set STORE_CONFIRMATION_KEY; a short one stops the start", async () => {
    const { startIssuer } = await import("../helpers/oidc.ts");
    const { startHttpBinary } = await import("../helpers/http.ts");
    const issuer = await startIssuer();
    const home = tempDir("profile-only");
    writeFileSync(
      join(home, "credentials"),
      "[p]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = profsecret\n",
    );
    const { STORE_ACCESS_KEY_ID: _a, STORE_SECRET_ACCESS_KEY: _s, ...store } = s3Env();
    const env = {
      ...store,
      AWS_SHARED_CREDENTIALS_FILE: join(home, "credentials"),
      AWS_CONFIG_FILE: join(home, "config"),
      STORE_OAUTH_ISSUER: issuer.issuer,
      STORE_STATE_URL: "redis://127.0.0.1:1",
    };
    try {
      const server = await startHttpBinary({ env, args: ["--profile", "p"] });
      await server.stop();
      expect(server.stderr()).toContain("STORE_CONFIRMATION_KEY");
      const keyed = await startHttpBinary({
        env: { ...env, STORE_CONFIRMATION_KEY: "k".repeat(48) },
        args: ["--profile", "p"],
      });
      await keyed.stop();
      expect(keyed.stderr()).not.toContain("STORE_CONFIRMATION_KEY");
      expect(keyed.stderr()).not.toContain("k".repeat(48));
      const short = runBinary(["--transport", "http", "--profile", "p"], {
        ...env,
        STORE_CONFIRMATION_KEY: "too-short-a-key",
      });
      expect(short.exitCode).toBe(1);
      expect(short.stderr).toContain("STORE_CONFIRMATION_KEY");
      expect(short.stderr).not.toContain("too-short-a-key");
    } finally {
      await issuer.stop();
    }
  }, 60_000);
});

test("configuration errors are reported all at once: a bad endpoint does not hide a bad --allowed-dir", () => {
  const missing = join(tempDir("all-at-once"), "not-there");
  const r = runBinary(["--endpoint-url", "ftp://s3.example.invalid", "--allowed-dir", missing], s3Env());
  expect(r.exitCode).toBe(1);
  expect(r.stderr).toContain("2 problem(s)");
  expect(r.stderr).toContain("ftp://");
  expect(r.stderr).toContain(missing);
});
