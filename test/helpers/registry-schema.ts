/** The MCP Registry's server.json schema, 2025-12-11, as the registry has it (test/fixtures/registry/README.md). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import addFormats from "ajv-formats";

/** The official schema file (test/fixtures/registry/README.md says where it came from). */
export const SCHEMA_FILE = join(import.meta.dir, "../fixtures/registry/server.schema.2025-12-11.json");
export const SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0";

/** What the schema says of `doc`: its errors, none when valid. */
export function schemaErrors(doc: unknown): string[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, "utf8")));
  return validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
}
