/**
 * An MCP Apps host for tests: headless Chromium (Debian's
 * chromium-headless-shell, driven by playwright-core) showing
 * test/browser/host.ts, which loads the server's view in a sandboxed iframe
 * served with the CSP its resource declares, exactly as a host builds it.
 * The view's tool calls go through the official AppBridge to the compiled
 * binary over stdio (the runner's MCP client).
 */

import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type Browser, chromium, type Frame, type FrameLocator, type Page } from "playwright-core";
import { APP_MIME_TYPE, BROWSER_URI } from "../../src/mcp/object-browser.ts";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/lib/chromium/chromium-headless-shell";
export const SCREENSHOTS = resolve(import.meta.dir, "../../.tmp/screenshots");

interface UiCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

/** The Content-Security-Policy a host gives a view: the extension's restrictive default, widened only by what the resource declares. */
export function cspFor(csp: UiCsp | undefined): string {
  const resources = (csp?.resourceDomains ?? []).join(" ");
  const connect = (csp?.connectDomains ?? []).join(" ") || "'none'";
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`,
    `style-src 'unsafe-inline' ${resources}`,
    `img-src data: ${resources}`,
    `font-src ${resources || "'none'"}`,
    `media-src data: ${resources}`,
    `connect-src ${connect}`,
    `frame-src ${(csp?.frameDomains ?? []).join(" ") || "'none'"}`,
    `base-uri ${(csp?.baseUriDomains ?? []).join(" ") || "'none'"}`,
    "form-action 'none'",
  ].join("; ");
}

export interface AppHost {
  page: Page;
  /** Locators inside the view's frame. */
  view: FrameLocator;
  /** The view's frame, for evaluating in it. */
  frame(): Frame;
  /** URLs the view asked the host to open. */
  openedLinks: string[];
  /** Errors the view's page logged (CSP violations, exceptions). */
  pageErrors: string[];
  /** The view's HTML as the server served it, and the CSP it was given. */
  html: string;
  csp: string;
  /** Calls a tool as the conversation would, and shows its result in the view. */
  open(toolName: string, args: Record<string, unknown>, context?: Record<string, unknown>): Promise<void>;
  setHostContext(context: Record<string, unknown>): Promise<void>;
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startAppHost(client: Client): Promise<AppHost> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium-headless-shell (scripts/provision.sh test does) or set CHROMIUM_PATH.`,
    );
  const built = await Bun.build({
    entrypoints: [resolve(import.meta.dir, "../browser/host.ts")],
    target: "browser",
    format: "esm",
  });
  if (!built.success || !built.outputs[0]) throw new Error(`the test host did not build: ${built.logs.join("\n")}`);
  const hostScript = (await built.outputs[0].text()).replaceAll("</script", "<\\/script");
  const read = await client.readResource({ uri: BROWSER_URI });
  const content = read.contents[0] as { text?: string; mimeType?: string; _meta?: { ui?: { csp?: UiCsp } } };
  if (content?.mimeType !== APP_MIME_TYPE || typeof content.text !== "string")
    throw new Error(`${BROWSER_URI} is not an MCP App view: ${JSON.stringify(content).slice(0, 200)}`);
  const html = content.text;
  const csp = cspFor(content._meta?.ui?.csp);
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const { pathname } = new URL(request.url);
      if (pathname === "/view")
        return new Response(html, {
          headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": csp },
        });
      if (pathname === "/")
        return new Response(
          `<!doctype html><html><head><meta charset="utf-8"><title>test host</title></head><body><script type="module">${hostScript}</script></body></html>`,
          { headers: { "content-type": "text/html; charset=utf-8" } },
        );
      return new Response("not found", { status: 404 });
    },
  });
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    const page = await browser.newPage({ viewport: { width: 1140, height: 800 } });
    const openedLinks: string[] = [];
    const pageErrors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    page.on("pageerror", (err) => pageErrors.push(String(err)));
    await page.exposeFunction("hostCallTool", (params: { name: string; arguments?: Record<string, unknown> }) =>
      client.callTool(params),
    );
    await page.exposeFunction("hostReadResource", (params: { uri: string }) => client.readResource(params));
    await page.exposeFunction("hostOpenLink", (url: string) => void openedLinks.push(url));
    await page.goto(`http://127.0.0.1:${server.port}/`);
    const frame = () => {
      const found = page.frames().find((f) => f.url().endsWith("/view"));
      if (!found) throw new Error("the view's frame is not loaded");
      return found;
    };
    mkdirSync(SCREENSHOTS, { recursive: true });
    const context = { theme: "light", locale: "en-US", timeZone: "UTC", platform: "web", displayMode: "inline" };
    const opened = browser;
    return {
      page,
      view: page.frameLocator("#view"),
      frame,
      openedLinks,
      pageErrors,
      html,
      csp,
      async open(toolName, args, extra = {}) {
        const result = await client.callTool({ name: toolName, arguments: args });
        await page.evaluate((options) => (window as any).startView(options), {
          toolName,
          args,
          result,
          context: { ...context, ...extra },
        });
      },
      async setHostContext(next) {
        await page.evaluate((c) => (window as any).setHostContext(c), { ...context, ...next });
      },
      async screenshot(name) {
        const path = resolve(SCREENSHOTS, `${name}.png`);
        await page.locator("#view").screenshot({ path });
        return path;
      },
      async close() {
        await opened.close();
        server.stop(true);
      },
    };
  } catch (err) {
    await browser?.close();
    server.stop(true);
    throw err;
  }
}
