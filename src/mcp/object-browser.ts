/**
 * The object browser, an MCP App (the io.modelcontextprotocol/ui extension;
 * the view itself is its own program in view/). The server side is only
 * this: list_buckets and list_objects name the view in `_meta.ui`, their
 * results say which tools the caller may use (the view offers only those
 * actions), and `ui://…/object-browser.html` returns the page. Hosts without
 * Apps ignore all three; the text and structured results are unchanged.
 * The SDK 1.x has no Apps helpers (ext-apps' server helpers expect the v2
 * SDK), so the metadata is set here by hand, as the extension specifies.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import type { AuditEntry } from "../runtime/audit.ts";

export const BROWSER_URI = "ui://store-mcp-server/object-browser.html";
/** The extension's MIME type for a view. */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";
/** The extension's id, under which a server advertises it in `capabilities.extensions`. */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";
/** The tools whose results open the browser. */
export const VIEW_TOOLS: ReadonlySet<string> = new Set(["list_buckets", "list_objects"]);
/** The result `_meta` key that lists the caller's tools (view/src/model.ts reads it). */
export const OFFERED_TOOLS_META = "store-mcp-server/tools";
/** What tools/list carries for a tool with the view. */
export const TOOL_UI_META = { ui: { resourceUri: BROWSER_URI } } as const;

/**
 * Origins a presigned URL of these stores can have, for the view's CSP
 * (`resourceDomains`: the host lets the view show images from them). A custom
 * endpoint: its origin, and its subdomains for virtual-hosted buckets; AWS:
 * every amazonaws.com host (buckets are subdomains of regional hosts).
 */
export function presignOrigins(endpoints: readonly (string | undefined)[]): string[] {
  const origins = new Set<string>();
  for (const endpoint of endpoints) {
    if (!endpoint) {
      origins.add("https://*.amazonaws.com");
      continue;
    }
    const url = new URL(endpoint);
    origins.add(url.origin);
    // An IP address has no subdomains.
    if (!/^[\d.]+$|^\[/.test(url.hostname)) origins.add(`${url.protocol}//*.${url.host}`);
  }
  return [...origins];
}

interface BrowserDeps {
  /** presignOrigins of the stores this caller may use. */
  origins: string[];
  audit?: (entry: Omit<AuditEntry, "caller" | "action">) => void;
}

/** Registers the view's resource; its HTML is loaded from the binary only when read. */
export function registerObjectBrowser(mcp: McpServer, deps: BrowserDeps): void {
  const _meta = { ui: { csp: { resourceDomains: deps.origins }, prefersBorder: true } };
  mcp.registerResource(
    "object-browser",
    BROWSER_URI,
    {
      title: "Object browser",
      description: "The interactive view of list_buckets and list_objects results (MCP Apps).",
      mimeType: APP_MIME_TYPE,
      _meta,
    },
    async (_uri, extra) => {
      const started = performance.now();
      const { OBJECT_BROWSER_HTML } = await import("./object-browser-html.ts");
      deps.audit?.({
        uri: BROWSER_URI,
        outcome: "ok",
        bytes: Buffer.byteLength(OBJECT_BROWSER_HTML),
        duration_ms: Math.round(performance.now() - started),
        request_id: extra.mcpReq.id,
      });
      return { contents: [{ uri: BROWSER_URI, mimeType: APP_MIME_TYPE, text: OBJECT_BROWSER_HTML, _meta }] };
    },
  );
}
