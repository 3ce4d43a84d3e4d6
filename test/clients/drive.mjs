// Drives the compiled server through one real third-party MCP client library,
// under Node 22 (what these libraries require), and prints, per scenario, what
// that library hands to the model: its own tool-result conversion, not the raw
// MCP result. Run by test/e2e/client-matrix.test.ts:
//   node drive.mjs '{"client":"ai-sdk","binary":"…","env":{…},"bucket":"…","dir":"…"}'

import { join } from "node:path";
import { pathToFileURL } from "node:url";

const cfg = JSON.parse(process.argv[2]);
const { binary, env, bucket } = cfg;
const args = ["--allowed-dir", cfg.dir];
const serverEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env };
const options = cfg.options ?? {};

const SCENARIOS = {
  text: { bucket_name: bucket, object_key: "notes.txt" },
  image: { bucket_name: bucket, object_key: "dot.png" },
  binary: { bucket_name: bucket, object_key: "blob.bin" },
  binaryBytes: { bucket_name: bucket, object_key: "blob.bin", include_binary: true },
  truncated: { bucket_name: bucket, object_key: "long.txt", max_content_size: 100 },
  download: {
    bucket_name: bucket,
    object_key: "notes.txt",
    mode: "download",
    local_path: "down/notes.txt",
    overwrite: true,
  },
  error: { bucket_name: bucket, object_key: "missing.txt" },
  // What strict function calling sends for the optional parameters it was not given.
  nulls: {
    bucket_name: bucket,
    object_key: "notes.txt",
    version_id: null,
    mode: null,
    local_path: null,
    max_content_size: null,
    overwrite: null,
    offset: null,
  },
};

/** Each client: connect, then a function from tool arguments to what the model is given, then close. */
const CLIENTS = {
  async "ai-sdk"() {
    const { createMCPClient } = await import("@ai-sdk/mcp");
    const { Experimental_StdioMCPTransport } = await import("@ai-sdk/mcp/mcp-stdio");
    const client = await createMCPClient({
      transport: new Experimental_StdioMCPTransport({ command: binary, args, env: serverEnv }),
    });
    const tools = await client.tools();
    const tool = tools.get_object;
    return {
      run: async (input) =>
        tool.toModelOutput({
          toolCallId: "c1",
          input,
          output: await tool.execute(input, { toolCallId: "c1", messages: [] }),
        }),
      close: () => client.close(),
    };
  },
  // The app passes explicit schemas (as the AI SDK's docs show for typed results): execute() then returns structuredContent.
  async "ai-sdk-schemas"() {
    const { createMCPClient } = await import("@ai-sdk/mcp");
    const { Experimental_StdioMCPTransport } = await import("@ai-sdk/mcp/mcp-stdio");
    const { jsonSchema } = await import("@ai-sdk/provider-utils");
    const client = await createMCPClient({
      transport: new Experimental_StdioMCPTransport({ command: binary, args, env: serverEnv }),
    });
    const listed = (await client.listTools()).tools.find((t) => t.name === "get_object");
    const tools = await client.tools({
      schemas: {
        get_object: { inputSchema: jsonSchema(listed.inputSchema), outputSchema: jsonSchema(listed.outputSchema) },
      },
    });
    const tool = tools.get_object;
    return {
      run: async (input) =>
        tool.toModelOutput({
          toolCallId: "c1",
          input,
          output: await tool.execute(input, { toolCallId: "c1", messages: [] }),
        }),
      close: () => client.close(),
    };
  },
  async langchain() {
    const { MultiServerMCPClient } = await import("@langchain/mcp-adapters");
    const { AIMessage } = await import("@langchain/core/messages");
    const { ChatPromptValue } = await import("@langchain/core/prompt_values");
    const { convertMessagesToCompletionsMessageParams } = await import("@langchain/openai");
    const { convertPromptToAnthropic } = await import("@langchain/anthropic");
    // How LangChain's own OpenAI and Anthropic chat models would send the tool message (offline: no request is made).
    const asProviders = (input, message) => {
      const turn = [
        new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "get_object", args: input }] }),
        message,
      ];
      const attempt = (fn) => {
        try {
          return fn();
        } catch (err) {
          return { error: String(err?.message ?? err).slice(0, 500) };
        }
      };
      return {
        openai: attempt(() => convertMessagesToCompletionsMessageParams({ messages: turn, model: "gpt-4o" }).at(-1)),
        anthropic: attempt(() => convertPromptToAnthropic(new ChatPromptValue(turn)).messages.at(-1)),
      };
    };
    const client = new MultiServerMCPClient({
      mcpServers: { s3: { transport: "stdio", command: binary, args, env: serverEnv } },
      ...(options.outputHandling ? { outputHandling: options.outputHandling } : {}),
    });
    const tool = (await client.getTools()).find((t) => t.name.endsWith("get_object"));
    return {
      // A tool call, as an agent makes it: the ToolMessage's content is what goes back to the model.
      run: async (input) => {
        const message = await tool.invoke({ type: "tool_call", id: "c1", name: tool.name, args: input });
        return {
          content: message.content,
          artifact: message.artifact,
          status: message.status,
          providers: asProviders(input, message),
        };
      },
      close: () => client.close(),
    };
  },
  async mastra() {
    const { MCPClient } = await import("@mastra/mcp");
    const client = new MCPClient({ servers: { s3: { command: binary, args, env: serverEnv } } });
    const tools = await client.listTools();
    const tool = tools.s3_get_object;
    return {
      run: async (input) => {
        const output = await tool.execute(input, {});
        return tool.toModelOutput ? tool.toModelOutput(output) : { type: "json", value: output };
      },
      close: () => client.disconnect(),
    };
  },
  async "openai-agents"() {
    const { MCPServerStdio, getAllMcpTools, RunContext } = await import("@openai/agents");
    const core = join(process.cwd(), "node_modules/@openai/agents-core/dist/runner/toolExecution.mjs");
    const { getToolCallOutputItem } = await import(pathToFileURL(core).href);
    const server = new MCPServerStdio({ name: "s3", command: binary, args, env: serverEnv });
    await server.connect();
    const tools = await getAllMcpTools({
      mcpServers: [server],
      runContext: new RunContext({}),
      agent: { name: "matrix" },
      convertSchemasToStrict: true,
    });
    const tool = tools.find((t) => t.name === "get_object");
    return {
      // The function call output item the runner sends back to the model.
      run: async (input) => {
        const output = await tool.invoke(new RunContext({}), JSON.stringify(input), {
          toolCall: { type: "function_call", callId: "c1", name: tool.name, arguments: JSON.stringify(input) },
        });
        return getToolCallOutputItem(
          { type: "function_call", callId: "c1", name: tool.name, arguments: JSON.stringify(input) },
          output,
        ).output;
      },
      // The strict-mode schema the model is given.
      schema: tool.parameters,
      close: () => server.close(),
    };
  },
};

const session = await CLIENTS[cfg.client]();
const results = {};
for (const [name, input] of Object.entries(SCENARIOS)) {
  try {
    results[name] = { model: await session.run(input) };
  } catch (err) {
    results[name] = { thrown: String(err?.message ?? err).slice(0, 2000) };
  }
}
if (session.schema) results.schema = session.schema;
await session.close();
process.stdout.write(JSON.stringify(results));
process.exit(0);
