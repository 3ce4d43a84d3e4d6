import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../../src/config/config.ts";
import { describeConfig, redactKeyId } from "../../../src/config/config-description.ts";

const ok = (cli: Parameters<typeof resolveConfig>[0], env: Record<string, string> = {}) => {
  const r = resolveConfig(cli, env);
  if (!r.ok) throw new Error(r.errors.join("; "));
  return r;
};

describe("resolveConfig", () => {
  test("no options and no environment: AWS chain, us-east-1, info", () => {
    const { config } = ok({});
    expect(config.credentials).toBeUndefined();
    expect(config.region).toBe("us-east-1");
    expect(config.logLevel).toBe("info");
    expect(config.endpointUrl).toBeUndefined();
    expect(config.forcePathStyle).toBe(false);
    expect(config.checksums).toBe("WHEN_SUPPORTED");
  });

  test("options beat STORE_* variables, which beat AWS_REGION", () => {
    const env = {
      STORE_ACCESS_KEY_ID: "ENVKEY",
      STORE_SECRET_ACCESS_KEY: "envsecret",
      STORE_REGION: "eu-west-1",
      AWS_REGION: "ap-south-1",
    };
    expect(ok({}, env).config.region).toBe("eu-west-1");
    expect(ok({}, { AWS_REGION: "ap-south-1" }).config.region).toBe("ap-south-1");
    const { config } = ok({ accessKeyId: "CLIKEY", region: "us-west-2" }, env);
    expect(config.credentials).toEqual({ accessKeyId: "CLIKEY", secretAccessKey: "envsecret" });
    expect(config.region).toBe("us-west-2");
    expect(config.credentialSource).toBe("command line");
  });

  test("environment only: STORE_* credentials and session token", () => {
    const { config } = ok({}, { STORE_ACCESS_KEY_ID: "K", STORE_SECRET_ACCESS_KEY: "S", STORE_SESSION_TOKEN: "T" });
    expect(config.credentials).toEqual({ accessKeyId: "K", secretAccessKey: "S", sessionToken: "T" });
    expect(config.credentialSource).toBe("STORE_* environment variables");
  });

  test('empty variables count as unset (clients often pass "")', () => {
    const { config } = ok({}, { STORE_ACCESS_KEY_ID: "", STORE_SECRET_ACCESS_KEY: " ", STORE_REGION: "" });
    expect(config.credentials).toBeUndefined();
    expect(config.region).toBe("us-east-1");
  });

  test("half a key pair is an error naming the missing half", () => {
    const r = resolveConfig({ accessKeyId: "K" }, {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join()).toContain("secret access key");
    const r2 = resolveConfig({}, { STORE_SECRET_ACCESS_KEY: "S" });
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.errors.join()).toContain("access key id");
  });

  test("every problem is reported at once", () => {
    const r = resolveConfig(
      { accessKeyId: "K", endpointUrl: "ftp://x", logLevel: "loud" },
      { STORE_MAX_ATTEMPTS: "zero" },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.length).toBe(4);
  });

  test("endpoint: path style and WHEN_REQUIRED by default, each overridable", () => {
    const { config } = ok({ endpointUrl: "http://127.0.0.1:9000/" });
    expect(config.endpointUrl).toBe("http://127.0.0.1:9000");
    expect(config.forcePathStyle).toBe(true);
    expect(config.checksums).toBe("WHEN_REQUIRED");
    const over = ok(
      { endpointUrl: "https://s3.example.com" },
      { STORE_FORCE_PATH_STYLE: "false", STORE_CHECKSUMS: "when_supported" },
    ).config;
    expect(over.forcePathStyle).toBe(false);
    expect(over.checksums).toBe("WHEN_SUPPORTED");
  });

  test("an endpoint carrying credentials is refused without echoing them", () => {
    const r = resolveConfig({ endpointUrl: "https://user:hunter2@s3.example.com" }, {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join()).not.toContain("hunter2");
  });

  test("a secret on the command line works but warns", () => {
    const r = ok({ accessKeyId: "K", secretAccessKey: "S" });
    expect(r.warnings.join()).toContain("process list");
  });

  test("lists: --allowed-dir and --bucket beat their variables; STORE_READ_ONLY", () => {
    const env = { STORE_ALLOWED_DIRS: "/a:/b", STORE_BUCKETS: "x, y", STORE_READ_ONLY: "true" };
    const fromEnv = ok({}, env).config;
    expect(fromEnv.allowedDirs).toEqual(["/a", "/b"]);
    expect(fromEnv.buckets).toEqual(["x", "y"]);
    expect(fromEnv.readOnly).toBe(true);
    const fromCli = ok({ allowedDirs: ["/c"], buckets: ["z"] }, env).config;
    expect(fromCli.allowedDirs).toEqual(["/c"]);
    expect(fromCli.buckets).toEqual(["z"]);
  });

  test("describeConfig shows the key id's last 4 characters and never the secret", () => {
    const { config } = ok(
      {},
      { STORE_ACCESS_KEY_ID: "AKIAEXAMPLEKEY1234", STORE_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/SECRET" },
    );
    const text = JSON.stringify(describeConfig(config));
    expect(text).toContain("…1234");
    expect(text).not.toContain("AKIAEXAMPLE");
    expect(text).not.toContain("SECRET");
    expect(redactKeyId("ABCDEFGH")).toBe("…EFGH");
  });
});

describe("the state directory and the shared state store", () => {
  test("STORE_STATE_DIR and --state-dir name it, off keeps none; else the platform's place for an application's state", async () => {
    const { stateDirFrom } = await import("../../../src/runtime/state-dir.ts");
    const { homedir } = await import("node:os");
    expect(stateDirFrom({ STORE_STATE_DIR: "/srv/state" })).toBe("/srv/state");
    expect(stateDirFrom({ STORE_STATE_DIR: "off" })).toBeUndefined();
    expect(stateDirFrom({ XDG_STATE_HOME: "/x/state" }, "linux")).toBe("/x/state/store-mcp-server");
    expect(stateDirFrom({}, "linux")).toBe(`${homedir()}/.local/state/store-mcp-server`);
    expect(stateDirFrom({}, "darwin")).toBe(`${homedir()}/Library/Application Support/store-mcp-server`);
    expect(ok({ stateDir: "off" }).config.stateDir).toBeUndefined();
    expect(ok({ stateDir: "/from/cli" }, { STORE_STATE_DIR: "/from/env" }).config.stateDir).toBe("/from/cli");
  });

  test("--state-url takes redis:// and rediss:// only, and the start-up description masks its password", () => {
    const env = { STORE_TRANSPORT: "http", STORE_HTTP_TOKENS: "t:0123456789abcdef0123" };
    const { config } = ok({}, { ...env, STORE_STATE_URL: "redis://:s3cr3t-pass@cache:6379/0" });
    expect(config.http?.stateUrl).toBe("redis://:s3cr3t-pass@cache:6379/0");
    expect(JSON.stringify(describeConfig(config))).not.toContain("s3cr3t-pass");
    const bad = resolveConfig({}, { ...env, STORE_STATE_URL: "http://cache:6379" });
    expect(bad.ok ? [] : bad.errors.join("\n")).toContain("is not redis: or rediss:");
  });
});
