/**
 * A stand-in for the Anthropic Messages API on loopback, for driving Claude
 * Code (`claude -p`) offline: it answers the first request that offers the
 * scripted tool with a tool_use of it, records the tool_result the client
 * sends back (exactly what the model would read), and then ends the turn —
 * or, with `then`, makes one more call chosen from that result (as a model
 * that reads it would) and ends the turn after its result.
 * Any other request (titles, summaries) gets a short text answer. Streaming
 * (SSE) and plain JSON answers are both served. Nothing leaves the machine.
 */
export interface ToolCallScript {
  /** The tool's name as the client offers it (Claude Code: mcp__<server>__<tool>). */
  tool: string;
  input: Record<string, unknown>;
  /** The call a model makes next, given the first call's result text (and the tools offered, by name). */
  then?(resultText: string, tools: Map<string, unknown>): { tool: string; input: Record<string, unknown> } | undefined;
}

export interface StandInAnthropic {
  url: string;
  /** The tool_result blocks the client sent, in order. */
  results: { tool_use_id: string; content: unknown; is_error?: boolean }[];
  /** Every tool name the client offered to the model. */
  offered: Set<string>;
  /** Each offered tool's input schema, by name. */
  schemas: Map<string, unknown>;
  /** The text of every user message the model was sent (a prompt the user picked arrives as one). */
  userTexts: string[];
  /** For each of those texts, the tools offered with the request that first carried it. */
  toolsWhenSaid: Map<string, Set<string>>;
  requests: number;
  stop(): void;
}

type Message = {
  role: string;
  content: string | { type: string; text?: string; tool_use_id?: string; content?: unknown; is_error?: boolean }[];
};

export function startStandInAnthropic(script: ToolCallScript): StandInAnthropic {
  const state = {
    results: [] as StandInAnthropic["results"],
    offered: new Set<string>(),
    schemas: new Map<string, unknown>(),
    userTexts: [] as string[],
    toolsWhenSaid: new Map<string, Set<string>>(),
    requests: 0,
  };
  let called = false;
  let followed = false;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || !url.pathname.endsWith("/v1/messages")) {
        // count_tokens and anything else: an answer that keeps the client going.
        if (url.pathname.endsWith("/count_tokens")) return Response.json({ input_tokens: 10 });
        return Response.json({});
      }
      state.requests++;
      const body = (await req.json()) as {
        model?: string;
        stream?: boolean;
        tools?: { name: string; input_schema?: unknown }[];
        messages?: Message[];
      };
      for (const t of body.tools ?? []) state.offered.add(t.name), state.schemas.set(t.name, t.input_schema);
      for (const m of body.messages ?? []) {
        if (m.role !== "user") continue;
        for (const text of typeof m.content === "string"
          ? [m.content]
          : m.content.filter((b) => b.type === "text").map((b) => b.text ?? ""))
          if (!state.userTexts.includes(text)) {
            state.userTexts.push(text);
            state.toolsWhenSaid.set(text, new Set((body.tools ?? []).map((t) => t.name)));
          }
      }
      const last = body.messages?.at(-1);
      const toolResults = Array.isArray(last?.content) ? last.content.filter((b) => b.type === "tool_result") : [];
      for (const r of toolResults)
        state.results.push({
          tool_use_id: r.tool_use_id ?? "",
          content: r.content,
          ...(r.is_error ? { is_error: true } : {}),
        });
      const offersTool = (body.tools ?? []).some((t) => t.name === script.tool);
      const resultText = (c: unknown) =>
        typeof c === "string" ? c : Array.isArray(c) ? c.map((b: { text?: string }) => b.text ?? "").join("\n") : "";
      const next =
        called && !followed && toolResults.length > 0 && script.then
          ? script.then(resultText(toolResults[0]!.content), state.schemas)
          : undefined;
      const blocks: Record<string, unknown>[] =
        offersTool && !called && toolResults.length === 0
          ? ((called = true), [{ type: "tool_use", id: "toolu_standin_1", name: script.tool, input: script.input }])
          : next
            ? ((followed = true), [{ type: "tool_use", id: "toolu_standin_2", name: next.tool, input: next.input }])
            : [{ type: "text", text: "Done." }];
      const stopReason = blocks[0]!.type === "tool_use" ? "tool_use" : "end_turn";
      const message = {
        id: `msg_standin_${state.requests}`,
        type: "message",
        role: "assistant",
        model: body.model ?? "claude-stand-in",
        content: blocks,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      };
      if (!body.stream) return Response.json(message);
      return new Response(sse(message, blocks, stopReason), { headers: { "content-type": "text/event-stream" } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    ...state,
    get requests() {
      return state.requests;
    },
    results: state.results,
    offered: state.offered,
    schemas: state.schemas,
    userTexts: state.userTexts,
    toolsWhenSaid: state.toolsWhenSaid,
    stop: () => server.stop(true),
  };
}

/** The Messages API's event stream for one message. */
function sse(message: Record<string, unknown>, blocks: Record<string, unknown>[], stopReason: string): string {
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  let out = event("message_start", {
    message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  blocks.forEach((block, index) => {
    if (block.type === "tool_use") {
      out += event("content_block_start", { index, content_block: { ...block, input: {} } });
      out += event("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    } else {
      out += event("content_block_start", { index, content_block: { type: "text", text: "" } });
      out += event("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    }
    out += event("content_block_stop", { index });
  });
  out += event("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  out += event("message_stop", {});
  return out;
}
