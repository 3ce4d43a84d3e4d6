/**
 * The workflow prompts offered as skills too (SEP-2640, the
 * io.modelcontextprotocol/skills extension, through the SDK's ext/skills):
 * each recipe a `skill://<name>/SKILL.md` whose arguments are placeholders
 * the model fills in from the conversation, for hosts that load skills
 * rather than show a prompt menu. The same recipes, the same rule: a skill is
 * offered where every tool it calls is. Built on the first skills request.
 */

import type { McpServer } from "@modelcontextprotocol/server";
import { SkillsExtension, skillEntry } from "@modelcontextprotocol/server/ext/skills";
import type { PromptDefinition } from "../prompts/index.ts";

type Entry = Awaited<ReturnType<typeof skillEntry>>;

/** A skill's name: the prompt's, as skill names are spelled (lowercase, hyphens). */
export const skillName = (prompt: PromptDefinition) => prompt.name.replace(/_/g, "-");

/** The SKILL.md of a prompt: its title and purpose, what to ask the user for, and the recipe with placeholders. */
export function skillMarkdown(prompt: PromptDefinition): string {
  const placeholders = Object.fromEntries(prompt.arguments.map((a) => [a.name, `<${a.name}>`]));
  const asks = prompt.arguments.map((a) => `- \`<${a.name}>\`${a.required ? "" : " (optional)"}: ${a.description}`);
  return [
    "---",
    `name: ${skillName(prompt)}`,
    `description: ${JSON.stringify(prompt.description)}`,
    "---",
    `# ${prompt.title}`,
    "",
    `${prompt.description} Uses the store-mcp-server tools ${prompt.needs.join(", ")}.`,
    "",
    "Fill in from the conversation (ask the user for what is missing):",
    ...asks,
    "",
    prompt.text(placeholders),
    "",
  ].join("\n");
}

/** Each distinct set of skills, built once per process (remote mode builds a server per request). */
const built = new Map<string, { files: Map<string, string>; entries?: Promise<Entry[]> }>();

export function registerSkills(mcp: McpServer, prompts: readonly PromptDefinition[]): void {
  if (prompts.length === 0) return;
  const key = prompts.map((p) => p.name).join(",");
  let set = built.get(key);
  if (!set) built.set(key, (set = { files: new Map(prompts.map((p) => [skillName(p), skillMarkdown(p)])) }));
  const { files } = set;
  const entries = () =>
    (set.entries ??= Promise.all([...files].map(([name, text]) => skillEntry(name, { "SKILL.md": text }))));
  const nameOf = (uri: string) => /^skill:\/\/([a-z0-9-]+)\/SKILL\.md$/.exec(uri)?.[1];
  new SkillsExtension({
    source: {
      list: async () => ({ skills: await entries() }),
      get: async (uri) => (await entries()).find((s) => s.uri === uri),
      read: async (uri) => {
        const text = files.get(nameOf(uri) ?? "");
        return text === undefined ? undefined : { text, mimeType: "text/markdown" };
      },
    },
  }).attach(mcp);
}
