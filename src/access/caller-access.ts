/**
 * What one caller may do under the policy: the rules that name them, added
 * up. A tool is offered when some rule grants it (its level within the
 * rule's access, in the rule's tools if it lists any, local files only where
 * the rule allows them); a call may touch an object when some rule that
 * grants the called tool covers its store, bucket and key at the level the
 * operation needs. Refusals name what is missing for this caller only,
 * never what others may do.
 */
import { ActionableError } from "../runtime/errors.ts";
import type { ToolDefinition, ToolFacts } from "../tool-kit/types.ts";
import { scopeFor } from "./policy.ts";
import type { Level, Policy, Rule } from "./policy-file.ts";

/** Who is calling, as the policy can match them. */
export interface Identity {
  /** For messages and the audit log: the token's label or the JWT's sub. */
  id: string;
  label?: string;
  sub?: string;
  /** The JWT's claims (for the groups claim). */
  claims?: Record<string, unknown>;
  /** The scopes the token carries, as named in it. */
  tokenScopes?: readonly string[];
}

const RANK: Record<Level, number> = { read: 0, write: 1, delete: 2 };

/** The values at a dotted path of the claims (`realm_access.roles`): a string or a list of strings. */
function claimValues(claims: Record<string, unknown> | undefined, path: string): string[] {
  let at: unknown = claims;
  for (const part of path.split("."))
    at = at && typeof at === "object" ? (at as Record<string, unknown>)[part] : undefined;
  if (typeof at === "string") return at.split(/[ ,]+/).filter(Boolean);
  return Array.isArray(at) ? at.filter((v): v is string => typeof v === "string") : [];
}

function names(rule: Rule, who: Identity, groups: string[]): boolean {
  return rule.who.some((w) => {
    if (w === "*") return true;
    const [kind, value] = [w.slice(0, w.indexOf(":")), w.slice(w.indexOf(":") + 1)];
    if (kind === "label") return who.label === value;
    if (kind === "sub") return who.sub === value;
    if (kind === "group") return groups.includes(value);
    return (who.tokenScopes ?? []).includes(value);
  });
}

const globs = new Map<string, Bun.Glob>();
function globMatch(pattern: string, value: string): boolean {
  let glob = globs.get(pattern);
  if (!glob) globs.set(pattern, (glob = new Bun.Glob(pattern)));
  return glob.match(value);
}

/** The part of a key space a set of rules opens in one bucket: everything, nothing, or these prefixes. */
export type PrefixView = { all: true } | { all: false; prefixes: string[] };

export class Grants {
  constructor(
    private readonly rules: Rule[],
    private readonly who: string,
    private readonly tool: string,
  ) {}

  #covering(level: Level, store: string, bucket: string): Rule[] {
    return this.rules.filter(
      (r) =>
        RANK[r.access] >= RANK[level] &&
        r.stores.some((s) => s === "*" || s === store) &&
        r.buckets.some((b) => globMatch(b, bucket)),
    );
  }

  /** Whether `key` (or, with "", the whole bucket) may be touched at `level`. */
  allows(level: Level, store: string, bucket: string, key: string): boolean {
    return this.#covering(level, store, bucket).some((r) =>
      r.prefixes.some((p) => key.startsWith(p) && (key !== "" || p === "")),
    );
  }

  /** Whether some rule lets the caller see anything of the bucket. */
  bucketVisible(store: string, bucket: string): boolean {
    return this.#covering("read", store, bucket).length > 0;
  }

  /** What of the keys under `prefix` may be read: all, or only those under these prefixes (none: an empty list). */
  view(store: string, bucket: string, prefix: string): PrefixView {
    const granted = this.#covering("read", store, bucket).flatMap((r) => r.prefixes);
    if (granted.some((p) => prefix.startsWith(p))) return { all: true };
    return { all: false, prefixes: granted.filter((p) => p.startsWith(prefix)) };
  }

  refusal(level: Level, store: string, bucket: string, key: string): ActionableError {
    const where = `${store}:s3://${bucket}/${key}`;
    return new ActionableError({
      resource: where,
      code: "PolicyDenied",
      message: `The policy has no rule giving ${this.who} ${level} access to ${key === "" ? "this whole bucket" : "this key"} for ${this.tool}.`,
      hint: `work within what your rules grant, or ask the server's operator for a rule with access ${level} on bucket ${bucket}${key ? ` and a prefix of this key` : ""}.`,
    });
  }
}

const usesLocalFiles = (tool: ToolFacts, args?: Record<string, unknown>) =>
  tool.localFiles === "always" ||
  (args !== undefined && typeof tool.localFiles === "function" && tool.localFiles(args as never));

export class CallerAccess {
  readonly #rules: Rule[];

  constructor(
    policy: Policy,
    readonly identity: Identity,
  ) {
    const groups = claimValues(identity.claims, policy.groupsClaim);
    this.#rules = policy.rules.filter((r) => names(r, identity, groups));
  }

  /** The rules that let this tool be used (for these arguments: local files only where a rule allows them), at any level. */
  #usable(tool: ToolFacts, args?: Record<string, unknown>): Rule[] {
    const local = usesLocalFiles(tool, args);
    return this.#rules.filter(
      (r) => (!r.tools || r.tools.includes(tool.name) || r.tools.includes(tool.group)) && (!local || r.localFiles),
    );
  }

  /** Those of them that grant the tool's own level (creating or deleting a bucket: over whole buckets, not some of their keys). */
  #granting(tool: ToolFacts, args?: Record<string, unknown>): Rule[] {
    const level = scopeFor(tool, args);
    const wholeBuckets = tool.group === "admin";
    return this.#usable(tool, args).filter(
      (r) => RANK[r.access] >= RANK[level] && (!wholeBuckets || r.prefixes.includes("")),
    );
  }

  /** Whether tools/list shows this tool to the caller (the job tools: wherever a call can be handed back, which the server decides). */
  offers(tool: ToolFacts): boolean {
    return tool.aboutJobs === true || this.#granting(tool).length > 0;
  }

  /**
   * What a call of this tool with these arguments may touch; undefined when
   * no rule grants the call at all. Each operation then needs its own level
   * from any rule the tool may use: a copy reads its source under one rule
   * and writes its destination under another.
   */
  forCall(tool: ToolDefinition, args: Record<string, unknown>): Grants | undefined {
    if (this.#granting(tool, args).length === 0) return undefined;
    return new Grants(this.#usable(tool, args), this.identity.id, tool.name);
  }

  /** Why no rule grants this call (the tool, or local files for it). */
  toolRefusal(tool: ToolDefinition, args: Record<string, unknown>): ActionableError {
    const local = usesLocalFiles(tool, args) && this.#granting(tool).length > 0;
    return new ActionableError({
      resource: tool.name,
      code: "PolicyDenied",
      message: local
        ? `The policy gives ${this.identity.id} no rule that allows local files for ${tool.name}.`
        : `The policy has no rule giving ${this.identity.id} the tool ${tool.name} (${scopeFor(tool, args)} access).`,
      hint: local
        ? "use presign_url to move the bytes, or ask the server's operator for a rule with local_files: true."
        : "use the tools listed for you, or ask the server's operator for a rule that grants this one.",
    });
  }
}
