/**
 * Every tool's advertised input schema stays within the keywords that
 * OpenAI (strict function calling), Gemini (function declarations) and
 * Anthropic (tool input_schema) all accept; the server still validates the
 * dropped constraints itself.
 */
import { expect, test } from "bun:test";
import { ALL_TOOLS } from "../../src/tool-registry/index.ts";
import { DROPPED_KEYWORDS, PORTABLE_KEYWORDS, toolJsonSchemas } from "../../src/tool-registry/json-schemas.ts";
import { connectInMemory } from "../helpers/in-memory.ts";
import { call, textOf } from "../helpers/mcp.ts";

/** Every keyword used in a schema, with where: property names under `properties` are names, not keywords. */
function keywords(node: unknown, path: string, out: Map<string, string>): void {
  if (Array.isArray(node)) return node.forEach((n, i) => keywords(n, `${path}[${i}]`, out));
  if (typeof node !== "object" || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    out.set(key, `${path}.${key}`);
    if (key === "properties")
      for (const [name, sub] of Object.entries(value as object)) keywords(sub, `${path}.properties.${name}`, out);
    else if (typeof value === "object") keywords(value, `${path}.${key}`, out);
  }
}

test("every input schema uses only the portable keywords", () => {
  for (const [tool, { inputSchema }] of Object.entries(toolJsonSchemas(ALL_TOOLS))) {
    const used = new Map<string, string>();
    keywords(inputSchema, tool, used);
    for (const [keyword, where] of used) expect(PORTABLE_KEYWORDS.has(keyword), `${where} is not portable`).toBe(true);
    // The top level does not claim to be closed: a parameter the tool does not take is ignored with a note, not refused
    // (strict-mode conversions, the OpenAI Agents SDK's and LangChain's, close it themselves: python-frameworks.test.ts).
    // A tool without parameters stays closed: the OpenAI Agents SDK's strict conversion refuses an open empty object.
    expect(inputSchema.type).toBe("object");
    expect(inputSchema.additionalProperties).toBe(
      Object.keys(inputSchema.properties ?? {}).length === 0 ? false : undefined,
    );
  }
});

test("the constraints left out of the advertised schemas are still enforced by the server", async () => {
  expect([...DROPPED_KEYWORDS]).toContain("maxLength");
  const client = await connectInMemory();
  try {
    const tooLong = await call(client, "list_objects", { bucket_name: "b".repeat(300) });
    expect(tooLong.isError).toBe(true);
    expect(textOf(tooLong)).toContain("bucket_name");
    const badMetadata = await call(client, "put_object", {
      bucket_name: "bucket",
      object_key: "k",
      content: "x",
      metadata: { "bad key!": "v" },
    });
    expect(badMetadata.isError).toBe(true);
  } finally {
    await client.close();
  }
});
