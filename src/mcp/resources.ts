/**
 * Objects as MCP resources: the template `s3://{bucket}/{+key}` (each key
 * segment percent-encoded), `resources/read` returning a window of the
 * object exactly as get_object read mode does (same bounds, truncation and
 * bucket allowlist), a small `resources/list`, and completions for the
 * template's bucket and key. Registered where get_object is offered.
 * Listing through resources/list and completions follows the tools: what a
 * caller may not list with list_buckets / list_objects it cannot enumerate
 * here either (--tools get_object alone reads only keys it already knows),
 * and under a policy they list through those tools' rules, not get_object's.
 * Each listing writes an audit line, as the tools' do.
 * With several stores, the others' objects are store://{store}/{bucket}/{+key}
 * (read and completed, not listed).
 */
import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { AuditEntry } from "../runtime/audit.ts";
import { ActionableError } from "../runtime/errors.ts";
import type { CallTracker } from "../runtime/lifecycle.ts";
import type { ByteBudget, LeaseHolder } from "../runtime/memory.ts";
import { scrubSecrets } from "../runtime/redact.ts";
import { type Storage, visibleBuckets } from "../storage/index.ts";
import { DEFAULT_MAX_CONTENT_SIZE, MAX_BUCKETS } from "../tool-kit/limits.ts";
import { keyOfUriPath, objectUri, readWindow } from "../tool-kit/object-window.ts";
import type { ToolContext } from "../tool-kit/types.ts";
import { type CompletionDeps, completeBuckets, listed, objectCompleters } from "./completions.ts";

/** resources/list: the first LISTED_PER_BUCKET keys of the first LISTED_BUCKETS buckets (≤ 100 items). */
export const LISTED_BUCKETS = 5;
export const LISTED_PER_BUCKET = 20;

/** A store's allowlist checks (stores.ts), made before a read reserves memory; its storage enforces them again. */
type StoreChecks = { checkBucket(bucket: string): void; checkKey(key: string): void };

type Deps = CompletionDeps &
  Pick<ToolContext, "storage" | "contentBudget"> &
  StoreChecks & {
    /** The same byte budget and call tracking as tool calls: parallel reads queue, shutdown cancels them. */
    memory: ByteBudget;
    calls: CallTracker;
    /** Where a read's reservation goes until its answer is written (as tool calls'); released when the handler returns without. */
    leases?: LeaseHolder;
    /** With several stores: the others, by name (the default is the one above), with their bucket listing where list_buckets is offered. */
    otherStores?: Record<
      string,
      Pick<ToolContext, "storage" | "bucketAllowed" | "configuredBuckets"> & StoreChecks & { bucketLister?: Storage }
    >;
    /** --audit-log: a line per read (the store named for another store's objects). */
    audit?: (entry: Omit<AuditEntry, "caller" | "action">) => void;
    /** --audit-required: why no read may run now (the audit log cannot be written). */
    auditRefusal?: () => ActionableError | undefined;
  };

/** A read holds its bytes, their text or base64 and the serialized answer at once (as get_object's heldBytes). */
const HELD_BYTES = 4 * DEFAULT_MAX_CONTENT_SIZE;

export function registerObjectResources(mcp: McpServer, deps: Deps): void {
  const template = new ResourceTemplate("s3://{bucket}/{+key}", {
    // A sample to show what is there. It never fails: Gemini CLI drops every tool of a server whose
    // resources/list errs (a store that is down at start-up, a key that may not list buckets), and the
    // tools report such problems themselves. A bucket that cannot be listed is left out.
    list: async (ctx) => {
      const extra = extraOf(ctx);
      const { buckets: bucketLister, keys: keyLister } = deps.lists;
      if (!bucketLister || !keyLister) return { resources: [] };
      const resources = await listed(deps, "resources/list", {}, async () => {
        // A page of names, filtered by the allowlist and the policy, then sampled.
        const listedBuckets = await visibleBuckets(
          bucketLister,
          deps.configuredBuckets,
          { maxBuckets: MAX_BUCKETS },
          extra.signal,
        ).then(
          (p) => p.buckets,
          () => [],
        );
        const buckets = listedBuckets.filter((b) => deps.bucketAllowed(b.name)).slice(0, LISTED_BUCKETS);
        const pages = await Promise.all(
          buckets.map((b) =>
            keyLister.listObjects({ bucket: b.name, maxKeys: LISTED_PER_BUCKET }, extra.signal).then(
              (p) => ({ bucket: b.name, objects: p.objects }),
              () => ({ bucket: b.name, objects: [] }),
            ),
          ),
        );
        return pages.flatMap(({ bucket, objects }) =>
          objects.map((o) => ({
            uri: objectUri(bucket, o.key),
            name: o.key,
            title: `${bucket}/${o.key}`,
            size: o.size,
          })),
        );
      });
      return { resources };
    },
    complete: objectCompleters(deps),
  });

  mcp.registerResource(
    "object",
    template,
    {
      title: "Object in the store",
      description: `An object's content: text, or base64 for binary, at most ${DEFAULT_MAX_CONTENT_SIZE} bytes (like get_object read mode).`,
    },
    (uri, variables, ctx) =>
      audited(deps, undefined, String(variables.bucket), String(variables.key), extraOf(ctx), () =>
        readObject(deps, uri, String(variables.bucket), String(variables.key), extraOf(ctx)),
      ),
  );

  // With several stores, the others' objects as store://{store}/{bucket}/{+key} (the key encoded as in s3:// URIs).
  // A Map, not the record: a URI's store name ("constructor", "__proto__") must not reach Object's own properties.
  const others = new Map(Object.entries(deps.otherStores ?? {}));
  if (others.size === 0) return;
  const names = [...others.keys()];
  const storeTemplate = new ResourceTemplate("store://{store}/{bucket}/{+key}", {
    list: undefined,
    complete: {
      store: async (value) => names.filter((n) => n.startsWith(value)),
      bucket: async (value, context) => {
        const store = context?.arguments?.store ?? "";
        const scope = others.get(store);
        const lister = scope?.bucketLister;
        return scope && lister ? completeBuckets(deps, lister, scope, value, store) : [];
      },
    },
  });
  mcp.registerResource(
    "store-object",
    storeTemplate,
    {
      title: "Object in another store",
      description: `An object of another configured store (list_stores): as s3:// URIs are for the default store.`,
    },
    (uri, variables, ctx) =>
      audited(
        deps,
        String(variables.store),
        String(variables.bucket),
        String(variables.key),
        extraOf(ctx),
        async () => {
          const scope = others.get(String(variables.store));
          if (!scope)
            throw Object.assign(
              new ResourceNotFoundError(
                uri.href,
                `${uri.href}: UnknownStore. This server has no store of that name. Next: use one of ${names.join(", ")}.`,
              ),
              { auditCode: "UnknownStore" },
            );
          return readObject({ ...deps, ...scope }, uri, String(variables.bucket), String(variables.key), extraOf(ctx));
        },
      ),
  );
}

type Extra = { signal: AbortSignal; requestId: string | number };
const extraOf = (ctx: ServerContext): Extra => ({ signal: ctx.mcpReq.signal, requestId: ctx.mcpReq.id });

/** A read with its audit line: the object it named (the key as the URI spells it, decoded), how it ended, the bytes returned. */
async function audited<T extends { contents: { _meta?: { returned_bytes?: number } }[] }>(
  deps: Deps,
  store: string | undefined,
  bucket: string,
  keyVar: string,
  extra: Extra,
  read: () => Promise<T>,
): Promise<T> {
  if (!deps.audit) return read();
  const started = performance.now();
  const entry = (outcome: string, bytes?: number) => {
    let key = keyVar;
    try {
      key = keyOfUriPath(keyVar);
    } catch {
      // A key that does not decode is logged as the URI spelled it.
    }
    return {
      ...(store ? { store } : {}),
      bucket,
      key,
      outcome,
      ...(bytes === undefined ? {} : { bytes }),
      duration_ms: Math.round(performance.now() - started),
      request_id: extra.requestId,
    };
  };
  try {
    const unaudited = deps.auditRefusal?.();
    const out = await asMcpError<T>(async () => {
      if (unaudited) throw unaudited;
      return read();
    });
    deps.audit(entry("ok", out.contents[0]?._meta?.returned_bytes));
    return out;
  } catch (err) {
    deps.audit(entry((err as { auditCode?: string }).auditCode ?? "InternalError"));
    throw err;
  }
}

/** resources/read: a window of the object exactly as get_object read mode gives it. */
function readObject(deps: Deps, uri: URL, bucket: string, keyVar: string, extra: Extra) {
  return asMcpError(async () => {
    const key = keyOfUriPath(keyVar);
    deps.checkBucket(bucket);
    deps.checkKey(key);
    const signal = deps.calls.callSignal(extra.signal);
    const release = await deps.memory.reserve(HELD_BYTES, signal);
    let window;
    try {
      window = await deps.calls.track(
        readWindow(
          { storage: deps.storage, signal, contentBudget: deps.contentBudget },
          { bucket, key },
          DEFAULT_MAX_CONTENT_SIZE,
          0,
        ),
      );
    } catch (err) {
      release();
      throw err;
    }
    if (deps.leases) deps.leases.hold(extra.requestId, release);
    else release();
    const { meta, shown, truncated } = window;
    const mimeType =
      shown.kind === "image" || shown.kind === "binary" ? shown.mimeType : (meta.content_type ?? "text/plain");
    // Paging and the object's size travel in _meta; the URI is the whole object, the window is its start.
    const _meta = {
      size: meta.size,
      truncated,
      returned_bytes: shown.returnedBytes,
      ...(window.nextOffset !== null ? { next_offset: window.nextOffset } : {}),
      ...(meta.etag ? { etag: meta.etag } : {}),
    };
    if (shown.kind === "text") return { contents: [{ uri: uri.href, mimeType, text: shown.text, _meta }] };
    if (shown.kind === "image" || shown.kind === "binary")
      return { contents: [{ uri: uri.href, mimeType, blob: shown.base64, _meta }] };
    throw new ActionableError({
      resource: uri.protocol === "s3:" ? objectUri(bucket, key) : uri.href,
      code: "ContentTooLarge",
      message: `The object is ${meta.size} bytes of binary content, more than one read returns.`,
      hint: 'use the get_object tool with mode "download", or presign_url for a link.',
    });
  }, uri.href);
}

/**
 * Our errors as JSON-RPC errors with the same actionable text; a missing object or bucket is MCP's "resource not
 * found" (-32602 with the URI in its data since 2026-07-28, which the SDK sends on every protocol version).
 */
async function asMcpError<T>(read: () => Promise<T>, uri?: string): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof ActionableError)) throw err;
    const notFound = err.code === "NoSuchKey" || err.code === "NoSuchBucket";
    // The code travels along for the audit line (the message is the model's, not parsed back).
    const message = scrubSecrets(err.describe());
    throw Object.assign(
      notFound && uri
        ? new ResourceNotFoundError(uri, message)
        : new ProtocolError(ProtocolErrorCode.InvalidParams, message),
      { auditCode: err.code },
    );
  }
}
