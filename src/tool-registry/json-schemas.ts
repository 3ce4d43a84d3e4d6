/**
 * The JSON Schemas tools/list advertises, made exactly as the MCP SDK makes
 * them (its own converter and options), then compacted: without `$schema`
 * (some providers reject it), `propertyNames: {type: string}` (JSON keys are
 * strings), an output schema's `additionalProperties: false` (it constrains
 * us, not the caller), the safe-integer bounds zod adds to every integer,
 * and in input schemas the keywords providers reject (DROPPED_KEYWORDS).
 * Computed when the binary is built (json-schemas.macro.ts): converting
 * them at the first tools/list would cost every cold start (BENCH_ONLY=start).
 */
import { z } from "zod";
import type { ToolDefinition } from "../tool-kit/types.ts";

export interface ToolJsonSchemas {
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
}

/**
 * The JSON Schema keywords an advertised input schema may use: the ones
 * OpenAI's strict function calling, Gemini's function declarations and
 * Anthropic's tool schemas all accept (additionalProperties, on nested
 * objects only: Gemini's own schema drops it, and strict-mode conversions add
 * it at the top themselves). test/tools/schema-portability.test.ts fails when a tool's
 * schema needs another.
 */
export const PORTABLE_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "description",
  "enum",
  "items",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "nullable",
]);

/**
 * `"nullable": true` on each optional top-level parameter, and only there:
 * smolagents (through mcpadapt, which hands it `properties` without
 * `required`) treats every input as required unless it says `nullable`, so
 * without it 22 of 27 tools failed in the client before any call. It reads
 * only that key (an anyOf with null does not work). OpenAPI's keyword; the
 * other clients and providers tried ignore it (docs/clients.md).
 */
function markOptional(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (!properties) return schema;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return {
    ...schema,
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, p]) => [name, required.has(name) ? p : { ...p, nullable: true }]),
    ),
  };
}

/**
 * Validation keywords left out of advertised input schemas because a major
 * provider rejects them (OpenAI strict mode: string lengths, propertyNames;
 * Gemini: propertyNames, and older models pattern). The server validates every
 * argument against the full zod schema anyway, with messages naming the limit.
 */
export const DROPPED_KEYWORDS = new Set(["minLength", "maxLength", "pattern", "propertyNames", "format"]);

/** Bounds at or above these are validated but not advertised (see compactSchema). */
const UNSAID_MAXIMUM = 100_000;
const UNSAID_MAX_ITEMS = 100;

export function compactSchema(node: unknown, output: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => compactSchema(n, output));
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema") continue;
    if (key === "propertyNames" && JSON.stringify(value) === '{"type":"string"}') continue;
    if (!output && DROPPED_KEYWORDS.has(key)) continue;
    if (output && key === "additionalProperties" && value === false) continue;
    if (
      (key === "maximum" && value === Number.MAX_SAFE_INTEGER) ||
      (key === "minimum" && value === Number.MIN_SAFE_INTEGER)
    )
      continue;
    // A count or size of at least 0 or 1 goes without saying, and so do bounds no sensible call comes near (100 globs,
    // a million objects): each costs every tools/list, and the server's message names the limit if a model crosses it.
    if (!output && key === "minimum" && (value === 0 || value === 1)) continue;
    if (
      !output &&
      ((key === "maximum" && (value as number) >= UNSAID_MAXIMUM) ||
        (key === "maxItems" && (value as number) >= UNSAID_MAX_ITEMS))
    )
      continue;
    out[key] =
      key === "properties"
        ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, compactSchema(v, output)]))
        : compactSchema(value, output);
  }
  return out;
}

/**
 * An output schema as advertised: `{"type": "object"}`. It tells clients the
 * tool returns structured content (some hand the model only that, some only
 * the text, by its presence); the shapes themselves cost tools/list more than
 * all tool descriptions together, which its budgets (test/e2e/tool-list-budget.test.ts)
 * cannot hold, and no client tried reads them (the README's tool
 * reference and each result's text say what the fields are). The server
 * still checks every result against the full schema (the SDK does).
 */
export const ADVERTISED_OUTPUT_SCHEMA = { type: "object" } as const;

function convert(schema: unknown, pipeStrategy: "input" | "output"): Record<string, unknown> {
  if (!(schema instanceof z.ZodObject)) throw new Error("a tool schema is not an object schema");
  const compact = compactSchema(
    z.toJSONSchema(schema, { target: "draft-7", io: pipeStrategy }),
    pipeStrategy === "output",
  ) as Record<string, unknown>;
  if (pipeStrategy === "output") return { ...ADVERTISED_OUTPUT_SCHEMA };
  // A top-level argument the tool does not take is ignored with a note in the result (mcp/sdk-hooks.ts), not
  // refused, so "additionalProperties": false would say what the server does not do; nested objects keep theirs.
  // A tool without parameters keeps it: the OpenAI Agents SDK's strict conversion refuses an object that declares
  // no properties and is not closed (list_jobs was served non-strict without it).
  const { additionalProperties, ...input } = compact;
  const none = Object.keys((input.properties as object | undefined) ?? {}).length === 0;
  return markOptional(none ? { ...input, additionalProperties } : input);
}

export function toolJsonSchemas(tools: readonly ToolDefinition[]): Record<string, ToolJsonSchemas> {
  return Object.fromEntries(
    tools.map((t) => [
      t.name,
      { inputSchema: convert(t.inputSchema, "input"), outputSchema: convert(t.outputSchema, "output") },
    ]),
  );
}
