/**
 * The workflow prompts (src/prompts/) as MCP prompts: offered where every
 * tool a recipe calls is offered to this caller, their bucket and key
 * arguments completed as the caller's listing tools may list.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { z } from "zod";
import { PROMPTS, type PromptDefinition } from "../prompts/index.ts";
import { objectCompleters, type CompletionDeps } from "./resources.ts";

/** The prompts whose tools are all in `offered`. */
export function promptsFor(offered: readonly string[]): PromptDefinition[] {
  const has = new Set(offered);
  return PROMPTS.filter((p) => p.needs.every((tool) => has.has(tool)));
}

export function registerPrompts(mcp: McpServer, offered: readonly string[], completion: CompletionDeps): void {
  const complete = objectCompleters(completion);
  for (const prompt of promptsFor(offered)) {
    const argsSchema = Object.fromEntries(
      prompt.arguments.map((a) => {
        const text = a.required ? z.string().describe(a.description) : z.string().optional().describe(a.description);
        return [a.name, a.completes ? completable(text, (value, context) => complete[a.completes!](value ?? "", context)) : text];
      }),
    );
    mcp.registerPrompt(prompt.name, { title: prompt.title, description: prompt.description, argsSchema }, (args: Record<string, string | undefined>) => ({
      description: prompt.description,
      messages: [{ role: "user" as const, content: { type: "text" as const, text: prompt.text(args) } }],
    }));
  }
}
