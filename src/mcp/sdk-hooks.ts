/**
 * Adjustments the MCP SDK offers no option for, made at its request handlers
 * (through sdk-internals.ts, the one module that reaches past its public API).
 * 2. is below.
 *
 * 1. Arguments as clients really send them, before they meet the tool's
 * schema (the advertised schemas stay as they are):
 * - Null: clients built on strict function calling (OpenAI's, and code on
 *   top of it) make every parameter required-but-nullable and send `null`
 *   for the ones they do not use. A top-level `null` means "not given".
 * - Empty: the same clients, and agents that make every input required
 *   (smolagents, LangChain's strict conversion), fill in `""`. For an
 *   optional string or enum parameter, `""` means "not given" too, unless
 *   the tool says an empty string is a real value there (`emptyIsValue`).
 * - Unknown: Gemini CLI adds its own `wait_for_previous` to every tool and
 *   passes it on; models misspell. A parameter the tool does not take is
 *   dropped and named in the result (`ignored_parameters` and a line of
 *   text), so the call works and the model still sees what was ignored.
 */
import { isInputRequiredResult, type McpServer, type ServerContext } from "@modelcontextprotocol/server";
import type { ToolCard, ToolDefinition } from "../tool-kit/types.ts";
import { noteTaskAsked, TASKS_DECLARED, taskAskedFor, taskCreated } from "./jobs/tasks.ts";
import { installToolHandlers, wrapRequestHandler } from "./sdk-internals.ts";
import { listedTools } from "./tool-list.ts";

/** A top-level null argument means "not given". */
export function withoutNulls(args: unknown): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));
}

type ZodNode = { _zod?: { def?: { type?: string; innerType?: ZodNode } } };

type Parameters = { known: Set<string>; emptyMeansAbsent: Set<string> };

const parameters = new WeakMap<ToolDefinition, Parameters>();

/** The tool's parameters, and those where `""` means "not given" (optional strings and enums); worked out once per definition. */
function parametersOf(tool: ToolDefinition): Parameters {
  let found = parameters.get(tool);
  if (!found) parameters.set(tool, (found = readParameters(tool)));
  return found;
}

function readParameters(tool: ToolDefinition): Parameters {
  const shape = tool.inputSchema.shape as Record<string, ZodNode>;
  const emptyMeansAbsent = new Set<string>();
  for (const [name, field] of Object.entries(shape)) {
    const def = field._zod?.def;
    const inner = def?.type === "optional" ? def.innerType?._zod?.def?.type : undefined;
    if ((inner === "string" || inner === "enum") && !tool.emptyIsValue?.includes(name)) emptyMeansAbsent.add(name);
  }
  return { known: new Set(Object.keys(shape)), emptyMeansAbsent };
}

/** The arguments a tool takes, as it should see them, and the names of those it does not take. */
export function normalizeArguments(
  args: unknown,
  parameters: Parameters | undefined,
): { args: unknown; ignored: string[] } {
  const cleaned = withoutNulls(args);
  if (!parameters || typeof cleaned !== "object" || cleaned === null || Array.isArray(cleaned))
    return { args: cleaned, ignored: [] };
  const { known, emptyMeansAbsent } = parameters;
  const kept: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(cleaned)) {
    if (!known.has(name)) ignored.push(name);
    else if (!(value === "" && emptyMeansAbsent.has(name))) kept[name] = value;
  }
  return { args: kept, ignored };
}

type CallResult = {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** Names of ignored parameters a result repeats, each cut to this length: the client chose them, so they are bounded. */
const NAMED_IGNORED = 20;
const IGNORED_NAME_CHARS = 64;

/** Says in the result which arguments were ignored: in the text, and (for a success) in structuredContent. */
function noteIgnored(result: CallResult, ignored: string[], tool: ToolDefinition): CallResult {
  const named = ignored.slice(0, NAMED_IGNORED).map((n) => n.slice(0, IGNORED_NAME_CHARS));
  const more = ignored.length > named.length ? ` and ${ignored.length - named.length} more` : "";
  const takes = Object.keys(tool.inputSchema.shape);
  const line = `Ignored parameter(s) ${tool.name} does not take: ${named.map((n) => JSON.stringify(n)).join(", ")}${more}. ${takes.length ? `It takes: ${takes.join(", ")}.` : "It takes no parameters."}`;
  return {
    ...result,
    content: [...(result.content ?? []), { type: "text", text: line }],
    ...(result.structuredContent
      ? { structuredContent: { ...result.structuredContent, ignored_parameters: named } }
      : {}),
  };
}

/** The answer to a call of a tool this server does not offer (read-only, --tools, a policy, a model's guess). */
function unknownTool(name: unknown, offered: readonly ToolCard[]): CallResult {
  const named = JSON.stringify(String(name ?? "").slice(0, IGNORED_NAME_CHARS));
  const text = `Tool ${named} not found: this server does not offer it here (read-only mode, --tools, or the caller's policy leave it out). Its tools: ${offered.map((t) => t.name).join(", ")}.`;
  return { content: [{ type: "text", text }], isError: true };
}

/** A call the SDK answered without reaching a tool: one this server does not offer, or arguments its schema refuses. */
export type RefusedCall = (
  name: string,
  args: unknown,
  id: string | number,
  code: "UnknownTool" | "InvalidParams",
) => void;

/**
 * `tools` are the offered tools' cards, for tools/list; `registered` gives
 * an offered tool's definition, registered with the SDK, loading it on the
 * first call that needs it (server.ts). With `tasks`, a call may answer with a
 * task (tasks.ts): 3. is below.
 */
export function installSdkHooks(
  mcp: McpServer,
  tools: readonly ToolCard[],
  stores: string[] | undefined,
  refusedCall: RefusedCall | undefined,
  registered: (name: string) => Promise<ToolDefinition | undefined>,
  tasks = false,
): void {
  // Tools register with the SDK on the first call that needs them, after connecting: its handlers are installed now.
  installToolHandlers(mcp);
  const listed = listedTools(tools, stores);
  // For a client that declared tasks (2025-11-25's client capability), which tools take them.
  const listedForTasks = tasks ? listedTools(tools, stores, true) : listed;
  const offered = new Set(tools.map((t) => t.name));
  // A client that adds the same extra argument to every call (Gemini CLI's wait_for_previous) hears of it once per
  // connection: per transport, as a server kept between HTTP requests (transports/server-pool.ts) serves many.
  const notedBy = new WeakMap<object, Set<string>>();
  const notedNow = () => {
    const transport: object = mcp.server.transport ?? mcp;
    let noted = notedBy.get(transport);
    if (!noted) notedBy.set(transport, (noted = new Set<string>()));
    return noted;
  };
  wrapRequestHandler(mcp, "tools/call", (original) => async (request, extra) => {
    const params = request.params as { name?: string; arguments?: unknown } | undefined;
    const name = typeof params?.name === "string" && offered.has(params.name) ? params.name : undefined;
    // A tool this server does not offer (read-only, --tools, a model's guess): the SDK answers; the audit log hears of it.
    const id = (extra as { mcpReq: { id: string | number } }).mcpReq.id;
    if (name === undefined) {
      refusedCall?.(String(params?.name ?? ""), params?.arguments, id, "UnknownTool");
      // An error result the model can act on (the v2 SDK answers a JSON-RPC error, which many hosts show only to the user).
      return unknownTool(params?.name, tools);
    }
    const tool = await registered(name);
    const { args, ignored } = normalizeArguments(params?.arguments, tool && parametersOf(tool));
    // 3. A call that asks for a task and is handed back as a job answers with the task, after the SDK has checked
    // the job handle it would otherwise have answered (the SDK has no task answer for tools/call to check).
    const ctx = extra as ServerContext;
    const shape = tasks ? taskAskedFor(request, ctx) : undefined;
    if (shape) noteTaskAsked(ctx, shape);
    const result = (await original(
      { ...request, params: params && { ...params, arguments: args } },
      extra,
    )) as CallResult;
    const task = shape && taskCreated(ctx);
    if (task) return task;
    // Arguments the tool's schema refuses: the SDK answered before the tool ran (so the tool wrote no audit line).
    if (tool && result.isError && !tool.inputSchema.safeParse(args).success)
      refusedCall?.(tool.name, params?.arguments, id, "InvalidParams");
    if (!tool || ignored.length === 0 || isInputRequiredResult(result)) return result;
    const said = `${tool.name}\n${[...ignored].sort().join("\n")}`;
    const noted = notedNow();
    if (noted.has(said)) return result;
    if (noted.size < 1000) noted.add(said);
    return noteIgnored(result, ignored, tool);
  });
  // 2. tools/list: prepared above, the same answer for every server with this list.
  // A client declared tasks on this connection (stdio), or in the initialize its HTTP session id carries (http-eras.ts).
  wrapRequestHandler(mcp, "tools/list", () => async (_request, extra) => ({
    tools:
      (mcp.server.getClientCapabilities() as { tasks?: unknown } | undefined)?.tasks ||
      (extra as ServerContext).http?.authInfo?.extra?.[TASKS_DECLARED]
        ? listedForTasks
        : listed,
  }));
}
