/// <reference lib="dom" />
/**
 * A minimal MCP Apps host page for the object browser's tests, built on the
 * official AppBridge: it loads the view in a sandboxed iframe (no
 * same-origin: the view's origin is opaque, as in real hosts) and proxies the
 * view's tool calls, resource reads and link requests to functions the test
 * runner exposes (they talk to the compiled binary over stdio).
 */
import { AppBridge, type McpUiHostContext, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

interface HostWindow {
  hostCallTool(params: unknown): Promise<any>;
  hostReadResource(params: unknown): Promise<any>;
  hostOpenLink(url: string): Promise<void>;
  startView(options: {
    toolName: string;
    args: Record<string, unknown>;
    result: unknown;
    context: McpUiHostContext;
  }): Promise<void>;
  setHostContext(context: McpUiHostContext): void;
}
const host = window as unknown as HostWindow & Window;
let bridge: AppBridge | undefined;

host.startView = async ({ toolName, args, result, context }) => {
  // One view at a time, as a fresh tool result would show.
  await bridge?.close();
  document.getElementById("view")?.remove();
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts allow-forms allow-modals allow-popups");
  iframe.title = `${toolName} view`;
  iframe.id = "view";
  iframe.style.cssText = "width: 1100px; height: 760px; border: 1px solid #999";
  document.body.append(iframe);
  bridge = new AppBridge(
    null,
    { name: "store-mcp-test-host", version: "1.0.0" },
    { openLinks: {}, serverTools: {}, logging: {} },
    { hostContext: context },
  );
  bridge.oncalltool = (params) => host.hostCallTool(params);
  bridge.onreadresource = (params) => host.hostReadResource(params);
  // As hosts do: the frame takes the height the view reports (App autoResize).
  bridge.addEventListener("sizechange", ({ height }) => {
    if (height) iframe.style.height = `${Math.min(Math.ceil(height) + 2, 1200)}px`;
  });
  bridge.onopenlink = async ({ url }) => {
    await host.hostOpenLink(url);
    return {};
  };
  const initialized = new Promise<void>((resolve) => bridge!.addEventListener("initialized", () => resolve()));
  // Listening before the view loads: it sends ui/initialize as soon as its script runs.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  iframe.src = "/view";
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result as never);
};

host.setHostContext = (context) => bridge?.setHostContext(context);
