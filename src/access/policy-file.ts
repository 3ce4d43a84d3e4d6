/**
 * The per-caller policy file (--policy FILE / STORE_POLICY), YAML or JSON
 * (JSON is YAML): who (a static token's label, a JWT's sub, a value of the
 * groups claim, a token scope, or anyone) gets what (an access level on
 * stores, bucket globs and key prefixes, optionally only some tools, and
 * local directories or not). Deny by default: a caller no rule names gets no
 * tool. Checked whole before it is used: a file that does not parse or
 * validate is refused with every problem listed (and a reload keeps the
 * policy in force). Every field that narrows a rule is written out
 * (`buckets: ["*"]`, `prefixes: [""]`, `tools: ["*"]`, and `stores` when
 * there are several): a rule cut short by a half-written file then fails
 * validation instead of meaning "everything".
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

export type Level = "read" | "write" | "delete";
export const LEVELS: readonly Level[] = ["read", "write", "delete"];

/** One rule, as the file gives it, with its defaults filled in. */
export interface Rule {
  /** For messages: the rule's name, or "rule N". */
  name: string;
  who: string[];
  access: Level;
  stores: string[];
  buckets: string[];
  /** Key prefixes within those buckets; [""] is every key. */
  prefixes: string[];
  /** Tool names and groups; undefined: every tool within `access`. */
  tools: string[] | undefined;
  localFiles: boolean;
}

export interface Policy {
  /** Where in a JWT the caller's groups or roles are: a dotted path (`realm_access.roles`). */
  groupsClaim: string;
  rules: Rule[];
}

const WHO = /^(\*|(label|sub|group|scope):.+)$/;

const ruleSchema = z
  .object({
    name: z.string().min(1).max(100).optional(),
    who: z.array(z.string().regex(WHO, 'each "who" is label:NAME, sub:ID, group:NAME, scope:NAME or "*"')).min(1),
    access: z.enum(["read", "write", "delete"]),
    stores: z.array(z.string().min(1)).min(1).optional(),
    buckets: z.array(z.string().min(1).max(255), { error: 'write the buckets out: ["*"] for every bucket' }).min(1),
    prefixes: z.array(z.string().max(1024), { error: 'write the prefixes out: [""] for every key' }).min(1),
    tools: z.array(z.string().min(1), { error: 'write the tools out: ["*"] for every tool within access' }).min(1),
    local_files: z.boolean().optional(),
  })
  .strict();

const fileSchema = z
  .object({
    groups_claim: z.string().min(1).max(200).optional(),
    rules: z.array(ruleSchema).max(10_000),
  })
  .strict();

export interface PolicyNames {
  tools: readonly string[];
  groups: readonly string[];
  stores: readonly string[];
}

/** The policy in `text`, or every problem with it (naming the rule and field). */
export function parsePolicy(
  text: string,
  names: PolicyNames,
): { ok: true; policy: Policy } | { ok: false; errors: string[] } {
  let raw: unknown;
  try {
    raw = Bun.YAML.parse(text);
  } catch (err) {
    return { ok: false, errors: [`does not parse as YAML or JSON: ${(err as Error).message.slice(0, 200)}`] };
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success)
    return { ok: false, errors: parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`) };
  const errors: string[] = [];
  const rules = parsed.data.rules.map((r, i): Rule => {
    const name = r.name ?? `rule ${i + 1}`;
    if (r.stores === undefined && names.stores.length > 1)
      errors.push(
        `rules.${i} (${name}): stores: write the stores out (["*"] for every store): this server has several (${names.stores.join(", ")}).`,
      );
    for (const tool of r.tools) {
      if (tool === "*") continue;
      if (!names.tools.includes(tool) && !names.groups.includes(tool))
        errors.push(
          `rules.${i} (${name}): tools: "${tool}" is neither a tool nor a group (${names.groups.join(", ")}).`,
        );
    }
    for (const store of r.stores ?? []) {
      if (store !== "*" && !names.stores.includes(store))
        errors.push(`rules.${i} (${name}): stores: "${store}" is not a configured store (${names.stores.join(", ")}).`);
    }
    return {
      name,
      who: r.who,
      access: r.access,
      stores: r.stores ?? ["*"],
      buckets: r.buckets,
      prefixes: r.prefixes,
      tools: r.tools.includes("*") ? undefined : r.tools,
      localFiles: r.local_files ?? false,
    };
  });
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, policy: { groupsClaim: parsed.data.groups_claim ?? "groups", rules } };
}

/** Reads and checks the policy file. */
export function loadPolicy(
  file: string,
  names: PolicyNames,
): { ok: true; policy: Policy } | { ok: false; errors: string[] } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return { ok: false, errors: [`cannot be read: ${(err as Error).message}`] };
  }
  return parsePolicy(text, names);
}
