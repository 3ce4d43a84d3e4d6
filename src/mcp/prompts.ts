/**
 * The workflow prompts (src/prompts/) as MCP prompts: offered where every
 * tool a recipe calls is offered to this caller, their bucket and key
 * arguments completed as the caller's listing tools may list. prompts/list
 * is answered from the definitions; the prompts register with the SDK (their
 * argument schemas, start-up work a server that is never asked for a prompt
 * need not do) on the first prompts/get or prompt completion.
 */
import { completable, type McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { type PromptDefinition, promptsFor } from "../prompts/index.ts";
import { type CompletionDeps, objectCompleters } from "./completions.ts";
import { installPromptHandlers, wrapRequestHandler } from "./sdk-internals.ts";

export function registerPrompts(mcp: McpServer, offered: readonly string[], completion: CompletionDeps): void {
  const prompts = promptsFor(offered);
  if (prompts.length === 0) return;
  // Prompts register with the SDK on the first prompts/get or completion: its handlers are installed now, to be wrapped.
  installPromptHandlers(mcp);
  let registered = false;
  const register = () => {
    if (!registered) registerWithSdk(mcp, prompts, completion);
    registered = true;
  };
  const listed = {
    prompts: prompts.map((p) => ({
      name: p.name,
      title: p.title,
      description: p.description,
      arguments: p.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required })),
    })),
  };
  wrapRequestHandler(mcp, "prompts/list", () => async () => listed);
  wrapRequestHandler(mcp, "prompts/get", (original) => (request, extra) => (register(), original(request, extra)));
  wrapRequestHandler(mcp, "completion/complete", (original) => (request, extra) => {
    if ((request.params as { ref?: { type?: string } } | undefined)?.ref?.type === "ref/prompt") register();
    return original(request, extra);
  });
}

function registerWithSdk(mcp: McpServer, prompts: readonly PromptDefinition[], completion: CompletionDeps): void {
  const complete = objectCompleters(completion);
  for (const prompt of prompts) {
    const argsSchema = Object.fromEntries(
      prompt.arguments.map((a) => {
        const text = z.string().describe(a.description);
        const field = a.completes
          ? completable(text, (value, context) => complete[a.completes!](value ?? "", context))
          : text;
        return [a.name, a.required ? field : field.optional()];
      }),
    );
    mcp.registerPrompt(
      prompt.name,
      { title: prompt.title, description: prompt.description, argsSchema: z.object(argsSchema) },
      (args: Record<string, string | undefined>) => ({
        description: prompt.description,
        messages: [{ role: "user" as const, content: { type: "text" as const, text: prompt.text(args) } }],
      }),
    );
  }
}
