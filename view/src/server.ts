/** The server's tools as the view calls them, through the host (the view holds no credentials and never reaches the store itself). */
import type { App } from "@modelcontextprotocol/ext-apps";
import { errorTextOf, offeredToolsOf, type ToolResult } from "./model.ts";

/** A call the server answered with an error: its text (what failed, and "Next:" what to do). */
export class ServerError extends Error {}

export class Server {
  /** The tools this caller may use, as the last result said; empty until one does. */
  offered = new Set<string>();
  /** The store the conversation's call named, passed on to every call (servers with several stores). */
  store: string | undefined;

  constructor(private readonly app: App) {}

  offers(tool: string): boolean {
    return this.offered.has(tool);
  }

  /** Learns the offered tools from a result the host handed over. */
  learn(result: ToolResult): void {
    const offered = offeredToolsOf(result);
    if (offered) this.offered = offered;
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const result = (await this.app.callServerTool({
      name,
      arguments: { ...args, ...(this.store ? { store: this.store } : {}) },
    })) as ToolResult;
    this.learn(result);
    if (result.isError) throw new ServerError(errorTextOf(result));
    return result;
  }
}
