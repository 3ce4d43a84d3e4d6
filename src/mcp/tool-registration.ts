/**
 * The tools' definitions registered with the SDK. Given loaded (remote mode,
 * which builds a server per request, and a caller policy, whose guards need
 * them), every offered tool registers at once; otherwise each loads and
 * registers on its own first call (tool-registry/loaders.ts): the tools' schemas are
 * most of a start, and one call needs one tool's. tools/list is answered from
 * the cards either way (sdk-hooks.ts).
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ToolDefinition } from "../tool-kit/types.ts";
import { loadJobShape, TOOL_LOADERS } from "../tool-registry/loaders.ts";
import { withStoreParameter } from "./store-parameter.ts";
import { type CallEnvironment, toolCall } from "./tool-call.ts";

/** The tools' module (tool-registry/index.ts), as a dynamic import gives it. */
export type ToolModule = Pick<
  typeof import("../tool-registry/index.ts"),
  "ALL_TOOLS" | "JOB_TOOLS" | "STORE_TOOLS" | "jobShape"
>;

export interface ToolSetup {
  env: CallEnvironment;
  /** With several stores, their names: each tool then takes `store`. */
  storeNames: string[] | undefined;
  /** Whether a long call may answer with a job handle. */
  jobs: boolean;
  /** The `_meta` of the tools whose results the object browser shows. */
  viewMeta: (name: string) => Record<string, unknown>;
  /** The offered definitions, loaded: registered at once. */
  loaded?: { tools: readonly ToolDefinition[]; jobShape: ToolModule["jobShape"] };
}

export interface RegisteredTools {
  /** Every offered definition by name, when they were given loaded. */
  eager: ReadonlyMap<string, ToolDefinition> | undefined;
  /** An offered tool's definition, registered (loading it on its first call); undefined for a name with no tool. */
  registered(name: string): Promise<ToolDefinition | undefined>;
}

export function registerTools(mcp: McpServer, setup: ToolSetup): RegisteredTools {
  const { env, storeNames, jobs, viewMeta, loaded } = setup;
  const register = (given: ToolDefinition, jobShape: ToolModule["jobShape"] | undefined): ToolDefinition => {
    // With several stores each tool takes `store` (the server picks the store; the handler never sees it).
    const tool = storeNames ? withStoreParameter(given, storeNames) : given;
    // A long call may answer with a job handle instead of its result: what the SDK checks answers allows both.
    const outputSchema = jobShape && tool.handsBack ? orJob(tool.outputSchema, jobShape) : tool.outputSchema;
    const registered = mcp.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema,
        annotations: tool.annotations,
      },
      toolCall(tool, env, viewMeta(tool.name)),
    );
    // The SDK converts an output schema to JSON Schema on each server's first call of the tool: for servers built per
    // request (remote mode), once per process instead (BENCH_ONLY=team).
    if (loaded) registered.outputSchemaJson = outputJsonOf(outputSchema, () => registered.outputSchemaJson);
    return tool;
  };
  const eager = loaded && new Map(loaded.tools.map((t) => [t.name, register(t, jobs ? loaded.jobShape : undefined)]));
  const loading = new Map<string, Promise<ToolDefinition>>();
  return {
    eager,
    async registered(name) {
      if (eager) return eager.get(name);
      let tool = loading.get(name);
      if (!tool) {
        const load = TOOL_LOADERS[name];
        if (!load) return undefined;
        tool = Promise.all([load(), jobs ? loadJobShape() : undefined]).then(([t, shape]) => register(t, shape));
        loading.set(name, tool);
      }
      return tool;
    },
  };
}

/** A tool's output schema that also takes a job handle (its fields optional, `job` and `next` beside them). */
function orJob(
  schema: ToolDefinition["outputSchema"],
  jobShape: ToolModule["jobShape"],
): ToolDefinition["outputSchema"] {
  // Made once per tool and process: servers built per request would make it on every request (BENCH_ONLY=team).
  let found = jobOutputs.get(schema);
  if (!found)
    jobOutputs.set(
      schema,
      (found = schema.partial().extend({ job: jobShape.optional(), next: z.string().optional() })),
    );
  return found;
}
const jobOutputs = new WeakMap<ToolDefinition["outputSchema"], ToolDefinition["outputSchema"]>();

/** An output schema's JSON Schema as the SDK makes it (`convert`, the first time), kept per schema. */
function outputJsonOf<T>(schema: object, convert: () => T): T {
  if (!outputJsons.has(schema)) outputJsons.set(schema, convert());
  return outputJsons.get(schema) as T;
}
const outputJsons = new WeakMap<object, unknown>();
