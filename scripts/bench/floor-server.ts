/**
 * The runtime's floor for the cold-start figure: a compiled Bun program that
 * answers initialize and tools/list from constants, with no imports at all
 * (and --version with a line, the floor of ours).
 */
if (process.argv.includes("--version")) {
  process.stdout.write("0\n");
  process.exit(0);
}
let buffer = "";
process.stdin.on("data", (chunk: Buffer) => {
  buffer += chunk.toString();
  for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
    const msg = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    if (msg.method === "initialize") {
      reply(msg.id, {
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "floor", version: "0" },
      });
    } else if (msg.method === "tools/list") {
      reply(msg.id, { tools: [{ name: "hello", inputSchema: { type: "object" } }] });
    }
  }
});
process.stdin.on("end", () => process.exit(0));

function reply(id: unknown, result: unknown): void {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
}
