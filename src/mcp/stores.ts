/**
 * The stores a server speaks to, as the server sees them: each one's name,
 * what a caller may know of it, and the policy that is its own (read-only,
 * deletes, bucket allowlist). The server picks one per call from the
 * optional `store` argument; with one store there is no such argument and
 * nothing changes. Only storage/ knows how a store's client is built.
 */

import { allowlistedStorage } from "../access/allowlisted-storage.ts";
import { callRefusal, type PolicyOptions, unsafeKeyRefusal } from "../access/policy.ts";
import { ActionableError } from "../runtime/errors.ts";
import type { Storage } from "../storage/index.ts";
import type { ToolAddresses } from "../tool-kit/addresses.ts";
import type { StoreInfo, ToolContext, ToolDefinition } from "../tool-kit/types.ts";

export type { StoreInfo } from "../tool-kit/types.ts";

/** One store, ready for a call: its storage and the checks its policy makes. */
export interface StoreScope {
  info: StoreInfo;
  storage: Storage;
  policy: PolicyOptions;
  bucketAllowed(bucket: string): boolean;
  checkBucket(bucket: string): void;
  checkKey(key: string): void;
}

/** The policy of one store: the server's, with the store's read-only, deletes and allowlist. */
export function scopeOf(info: StoreInfo, storage: Storage, server: PolicyOptions): StoreScope {
  const allowlist = new Set(info.buckets);
  const policy: PolicyOptions = { ...server, readOnly: info.readOnly, allowDelete: info.allowDelete };
  const bucketAllowed = (bucket: string) => allowlist.size === 0 || allowlist.has(bucket);
  const checks = {
    bucketAllowed,
    checkBucket(bucket: string) {
      if (bucketAllowed(bucket)) return;
      throw new ActionableError({
        resource: `s3://${bucket}`,
        code: "BucketNotAllowed",
        message: "This server is limited to other buckets by its configuration.",
        hint: `use one of: ${[...allowlist].join(", ")}.`,
      });
    },
    checkKey(key: string) {
      const refusal = unsafeKeyRefusal(key, allowlist.size > 0);
      if (refusal) throw refusal;
    },
  };
  // Under an allowlist, every operation is checked too: buckets and keys a tool derives cannot go around it.
  return { info, storage: allowlist.size > 0 ? allowlistedStorage(storage, checks) : storage, policy, ...checks };
}

/** Several stores: each store's scope by name, the first the default. */
export class Stores {
  readonly #scopes: Map<string, StoreScope>;
  readonly defaultName: string;
  constructor(scopes: StoreScope[]) {
    this.#scopes = new Map(scopes.map((s) => [s.info.name, s]));
    this.defaultName = scopes[0]!.info.name;
  }
  get several(): boolean {
    return this.#scopes.size > 1;
  }
  get names(): string[] {
    return [...this.#scopes.keys()];
  }
  get all(): StoreScope[] {
    return [...this.#scopes.values()];
  }
  get default(): StoreScope {
    return this.#scopes.get(this.defaultName)!;
  }
  /** The store a call names (or the default); an unknown name is refused, listing the stores. */
  pick(name: unknown): StoreScope {
    if (name === undefined || name === "") return this.default;
    const scope = typeof name === "string" ? this.#scopes.get(name) : undefined;
    if (scope) return scope;
    throw new ActionableError({
      resource: `store ${String(name).slice(0, 64)}`,
      code: "UnknownStore",
      message: "This server has no store of that name.",
      hint: `use one of: ${this.names.join(", ")} (list_stores describes them).`,
    });
  }
  /** The server-wide view for the tool list: writes offered where any store is writable, deletes where any store allows them. */
  offering(server: PolicyOptions): PolicyOptions {
    return {
      ...server,
      readOnly: this.all.every((s) => s.info.readOnly),
      allowDelete: this.all.some((s) => s.info.allowDelete),
    };
  }
  /**
   * Why this call may not proceed on its store (its read-only, deletes,
   * allowlist keys, the caller's scopes). A move from another store deletes
   * there, not here: the source store must allow deletes (and writes), the
   * call's own store only writes.
   */
  refusal(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    scope: StoreScope,
    source?: StoreScope,
  ): ActionableError | undefined {
    if (source && source !== scope && tool.deletes?.(args as never)) {
      return (
        this.#named(callRefusal({ ...tool, deletes: undefined }, args, scope.policy), scope) ??
        this.#named(callRefusal(tool, args, source.policy), source)
      );
    }
    return this.#named(callRefusal(tool, args, scope.policy), scope);
  }

  /**
   * Every bucket and key the call's arguments name (found from the tool's schema when the binary was built, and carried
   * by its card: tool-kit/addresses.ts) against the allowlist and key rules of the store it is in (a copy's source: the
   * source store's); throws the first refusal.
   */
  checkAddresses(
    found: ToolAddresses | undefined,
    args: Record<string, unknown>,
    scope: StoreScope,
    source?: StoreScope,
  ): void {
    if (!found) return;
    const from = source ?? scope;
    const each = (names: string[], check: (value: string) => void) => {
      for (const name of names) {
        const value = args[name];
        for (const v of Array.isArray(value) ? value : [value]) if (typeof v === "string") check(v);
      }
    };
    try {
      each(found.bucket, scope.checkBucket);
      each(found.key, scope.checkKey);
    } catch (err) {
      throw this.#named(err as ActionableError, scope);
    }
    try {
      each(found.sourceBucket, from.checkBucket);
      each(found.sourceKey, from.checkKey);
    } catch (err) {
      throw this.#named(err as ActionableError, from);
    }
  }

  #named(refusal: ActionableError | undefined, scope: StoreScope): ActionableError | undefined {
    if (!refusal || !this.several) return refusal;
    return new ActionableError({
      resource: refusal.resource,
      code: refusal.code,
      message: `${refusal.message} (store ${scope.info.name})`,
      hint: refusal.hint,
    });
  }
}

/** What the `store` argument says (tools/list shows it without building the schema: sdk-hooks.ts). */
export function storeParameterText(names: string[]): string {
  // A first store named "default" needs no "(default default)".
  return names[0] === "default" ? "See list_stores." : `Default ${names[0]}; see list_stores.`;
}
export const SOURCE_STORE_TEXT =
  "Store of source_bucket (default: store); from another, streamed through the server and verified.";

/** An error of a call on a store, naming the store when there are several: `r2:s3://bucket/key`; NoSuchBucket names the other stores. */
export function nameStore(err: ActionableError, scope: StoreScope, stores: Stores): ActionableError {
  // Already named (a copy's source store): as it is.
  if (!stores.several || stores.names.some((n) => err.resource.startsWith(`${n}:s3://`))) return err;
  const others = stores.names.filter((n) => n !== scope.info.name);
  const hint =
    err.code === "NoSuchBucket"
      ? `${err.hint} The bucket is not in store ${scope.info.name}; the other stores are ${others.join(", ")} (pass store).`
      : err.hint;
  return new ActionableError({
    resource: `${scope.info.name}:${err.resource}`,
    code: err.code,
    message: err.message,
    hint,
    ...(err.status ? { status: err.status } : {}),
    retryable: err.retryable,
  });
}

/** For ToolContext: the store a copy reads from, when it is not the call's own. */
export function sourceContext(
  source: StoreScope | undefined,
  own: StoreScope,
  guard: (storage: Storage, store: string) => Storage = (storage) => storage,
): ToolContext["sourceStore"] {
  if (!source || source === own) return undefined;
  return { name: source.info.name, storage: guard(source.storage, source.info.name) };
}

/** For ToolContext: the store-specific part. */
export function storeContext(
  scope: StoreScope,
): Pick<ToolContext, "storage" | "bucketAllowed" | "configuredBuckets" | "region"> {
  return {
    storage: scope.storage,
    bucketAllowed: scope.bucketAllowed,
    configuredBuckets: scope.info.buckets,
    region: scope.info.region,
  };
}
