/**
 * A stand-in for the Gemini API on loopback, for driving Gemini CLI
 * (`gemini -p`) offline: the first request that declares the scripted
 * function is answered with a functionCall of it; the functionResponse the
 * client sends back (what the model would read) is recorded; every other
 * request gets a short text. Serves generateContent and its SSE stream.
 */
export interface StandInGemini {
  url: string;
  /** Every function the client declared to the model. */
  declared: Set<string>;
  /** The functionResponse parts the client sent, in order. */
  responses: { name: string; response: unknown }[];
  stop(): void;
}

type Part = { text?: string; functionCall?: unknown; functionResponse?: { name: string; response: unknown } };

export function startStandInGemini(call: { name: string; args: Record<string, unknown> }): StandInGemini {
  const declared = new Set<string>();
  const responses: StandInGemini["responses"] = [];
  let called = false;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || !/:(stream)?[gG]enerateContent$/.test(url.pathname)) return Response.json({});
      const body = (await req.json()) as {
        tools?: { functionDeclarations?: { name: string }[] }[];
        contents?: { role: string; parts: Part[] }[];
      };
      for (const tool of body.tools ?? []) for (const f of tool.functionDeclarations ?? []) declared.add(f.name);
      const last = body.contents?.at(-1);
      const answered = (last?.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse!);
      responses.push(...answered);
      const part: Part =
        declared.has(call.name) && !called && answered.length === 0
          ? ((called = true), { functionCall: { name: call.name, args: call.args } })
          : { text: "Done." };
      const answer = {
        candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      };
      if (url.searchParams.get("alt") === "sse")
        return new Response(`data: ${JSON.stringify(answer)}\n\n`, {
          headers: { "content-type": "text/event-stream" },
        });
      return Response.json(answer);
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, declared, responses, stop: () => server.stop(true) };
}
