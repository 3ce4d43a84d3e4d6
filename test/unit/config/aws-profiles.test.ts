/** Stores from AWS profiles and the environment (stores-config.ts, aws-profiles.ts), and which store is the default. */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseIni, readAwsProfiles } from "../../../src/config/aws-profiles.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { tempDir } from "../../helpers/files.ts";

describe("AWS shared config files", () => {
  test("sections, comments, and indented sub-settings under a key with no value", () => {
    const ini = parseIni(
      "[profile a] ; a comment\nregion = eu-west-1\n# another\ns3 =\n  endpoint_url = http://x:1\n  addressing_style = path\noutput = json\n[services  s]\ns3 =\n  endpoint_url = http://y:2\n",
    );
    expect(Object.fromEntries(ini.get("profile a")!)).toEqual({
      region: "eu-west-1",
      "s3.endpoint_url": "http://x:1",
      "s3.addressing_style": "path",
      output: "json",
    });
    expect(ini.get("services s")!.get("s3.endpoint_url")).toBe("http://y:2");
  });

  test("profiles of both files: region, endpoint_url directly or through services, names only in credentials", () => {
    const dir = tempDir("ini");
    writeFileSync(
      join(dir, "config"),
      "[default]\nregion = us-west-2\n[profile direct]\nendpoint_url = http://a:1\n[profile svc]\nservices = loc\nendpoint_url = http://ignored:9\n[services loc]\ns3 =\n  endpoint_url = http://b:2\n",
    );
    writeFileSync(join(dir, "credentials"), "[keys-only]\naws_access_key_id = X\naws_secret_access_key = Y\n");
    const profiles = readAwsProfiles({
      AWS_CONFIG_FILE: join(dir, "config"),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, "credentials"),
    });
    expect(Object.fromEntries(profiles)).toEqual({
      default: { region: "us-west-2" },
      direct: { endpointUrl: "http://a:1" },
      svc: { endpointUrl: "http://b:2" },
      "keys-only": {},
    });
  });
});

describe("which stores, and which is the default", () => {
  const base = {
    STORE_STORES: "r2",
    STORE_R2_ENDPOINT_URL: "https://acct.r2.cloudflarestorage.com",
    STORE_R2_ACCESS_KEY_ID: "RKEY",
    STORE_R2_SECRET_ACCESS_KEY: "RSECRET",
    STORE_R2_REGION: "auto",
  };
  const stores = (cli: Parameters<typeof resolveConfig>[0], env: Record<string, string>) => {
    const r = resolveConfig(cli, env);
    if (!r.ok) throw new Error(r.errors.join("\n"));
    return r.config;
  };

  test("single-store settings make the store default, first; the named ones follow with their own settings and policy", () => {
    const config = stores(
      { allowDelete: true },
      { ...base, STORE_ENDPOINT_URL: "http://127.0.0.1:7480", STORE_R2_READ_ONLY: "true" },
    );
    expect(
      config.stores.map((s) => [
        s.name,
        s.endpointUrl,
        s.region,
        s.readOnly,
        s.allowDelete,
        s.forcePathStyle,
        s.checksums,
      ]),
    ).toEqual([
      ["default", "http://127.0.0.1:7480", "us-east-1", false, true, true, "WHEN_REQUIRED"],
      ["r2", "https://acct.r2.cloudflarestorage.com", "auto", true, true, true, "WHEN_REQUIRED"],
    ]);
    expect(config.stores[1]!.credentials).toEqual({ accessKeyId: "RKEY", secretAccessKey: "RSECRET" });
  });

  test("with no single-store settings the first named store is the default, and the flags' allowlist is its", () => {
    const config = stores({ buckets: ["pub"] }, base);
    expect(config.stores.map((s) => s.name)).toEqual(["r2"]);
    expect(config.endpointUrl).toBe("https://acct.r2.cloudflarestorage.com");
    expect(config.credentials?.accessKeyId).toBe("RKEY");
    expect(config.stores[0]!.buckets).toEqual(["pub"]);
  });

  test("--read-only makes every store read-only; a store may refuse deletes the server allows", () => {
    const config = stores(
      { readOnly: true, allowDelete: true },
      { ...base, STORE_REGION: "us-east-1", STORE_R2_ALLOW_DELETE: "false" },
    );
    expect(config.stores.map((s) => [s.name, s.readOnly, s.allowDelete])).toEqual([
      ["default", true, true],
      ["r2", true, false],
    ]);
  });

  test("no other store: exactly one, named default, as before", () => {
    expect(stores({}, {}).stores.map((s) => s.name)).toEqual(["default"]);
  });
});
