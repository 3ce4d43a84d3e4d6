/**
 * A stand-in for OpenAI's Chat Completions API on loopback, for driving the
 * agent frameworks' own loops offline (LangChain's ChatOpenAI, the OpenAI
 * Agents SDK's chat-completions model, Pydantic AI, smolagents): it answers
 * each request that offers the scripted tools with the next scripted tool
 * call, records the tool messages the framework sends back (exactly what
 * the model would read) and the tool definitions it offered, and ends with
 * a short text answer. Streaming (SSE chunks) and plain JSON are both served.
 */
export interface ScriptedCall {
  /** The tool's name as the framework offers it (some prefix the server's name). */
  tool: string;
  arguments: Record<string, unknown>;
}

export interface StandInOpenAI {
  url: string;
  /** The content of every tool message the framework sent, in order. */
  results: unknown[];
  /** The messages of the last request, as JSON: where a framework that sends tool results as user text (smolagents) put them. */
  readonly transcript: string;
  /** Every tool the framework offered, by name, with its parameters schema as sent. */
  offered: Map<string, unknown>;
  requests: number;
  stop(): void;
}

type ChatMessage = { role: string; content?: unknown; tool_call_id?: string };
type ChatTool = { type: string; function?: { name: string; parameters?: unknown } };

/** The scripted calls go one per request, in order, to whichever offered tool ends with the scripted name. */
export function startStandInOpenAI(script: ScriptedCall[]): StandInOpenAI {
  const results: unknown[] = [];
  const offered = new Map<string, unknown>();
  let requests = 0;
  let next = 0;
  let transcript = "";
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method === "GET" && url.pathname.endsWith("/models"))
        return Response.json({ object: "list", data: [{ id: "gpt-stand-in", object: "model" }] });
      if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions"))
        return Response.json({ error: { message: `not served: ${url.pathname}` } }, { status: 404 });
      requests++;
      const body = (await req.json()) as {
        model?: string;
        stream?: boolean;
        tools?: ChatTool[];
        messages?: ChatMessage[];
      };
      for (const t of body.tools ?? []) if (t.function) offered.set(t.function.name, t.function.parameters);
      transcript = JSON.stringify(body.messages ?? []);
      // Each request carries the whole conversation: the tool messages not seen yet are what the model reads of the last calls.
      const told = (body.messages ?? []).filter((m) => m.role === "tool").map((m) => m.content);
      results.push(...told.slice(results.length));
      const step = script[next];
      const name = step && [...offered.keys()].find((n) => n === step.tool || n.endsWith(step.tool));
      const call =
        step && name && (body.tools ?? []).length > 0
          ? {
              id: `call_standin_${next + 1}`,
              type: "function",
              function: { name, arguments: JSON.stringify(step.arguments) },
            }
          : undefined;
      if (call) next++;
      const message = call
        ? { role: "assistant", content: null, tool_calls: [call] }
        : { role: "assistant", content: "Done." };
      const finish = call ? "tool_calls" : "stop";
      const id = `chatcmpl-standin-${requests}`;
      const created = Math.floor(Date.now() / 1000);
      const model = body.model ?? "gpt-stand-in";
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      if (!body.stream)
        return Response.json({
          id,
          object: "chat.completion",
          created,
          model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage,
        });
      const chunk = (delta: unknown, finish_reason: string | null, extra: object = {}) =>
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`;
      const delta = call
        ? { role: "assistant", content: null, tool_calls: [{ index: 0, ...call }] }
        : { role: "assistant", content: "Done." };
      const text = `${chunk(delta, null) + chunk({}, finish, { usage })}data: [DONE]\n\n`;
      return new Response(text, { headers: { "content-type": "text/event-stream" } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    results,
    offered,
    get requests() {
      return requests;
    },
    get transcript() {
      return transcript;
    },
    stop: () => server.stop(true),
  };
}
