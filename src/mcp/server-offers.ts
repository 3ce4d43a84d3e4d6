/**
 * What a server offers besides its tools, each only where the tools behind
 * it are offered to this caller: objects as resources (get_object's window
 * and checks), the object browser, workflow prompts and the same recipes as
 * skills. Under a caller policy, reads see what get_object may, and listings
 * (resources/list, completions) what the listing tools may.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { type CallerAccess, callGuard } from "../access/index.ts";
import { promptsFor } from "../prompts/index.ts";
import type { AuditEntry, AuditLog } from "../runtime/audit.ts";
import type { CallTracker } from "../runtime/lifecycle.ts";
import type { ByteBudget, LeaseHolder } from "../runtime/memory.ts";
import { CONTENT_BUDGET_BYTES } from "../runtime/response-budget.ts";
import type { Storage } from "../storage/index.ts";
import type { ToolDefinition } from "../tool-kit/types.ts";
import {
  APP_MIME_TYPE,
  OFFERED_TOOLS_META,
  presignOrigins,
  registerObjectBrowser,
  UI_EXTENSION,
  VIEW_TOOLS,
} from "./object-browser.ts";
import { registerPrompts } from "./prompts.ts";
import { registerObjectResources } from "./resources.ts";
import { registerSkills } from "./skills.ts";
import type { Stores } from "./stores.ts";

export interface OfferContext {
  /** The tools this caller is offered (their cards). */
  offered: readonly { name: string }[];
  stores: Stores;
  /** The caller's policy, with the loaded tools its guards need. */
  access: CallerAccess | undefined;
  eager: ReadonlyMap<string, ToolDefinition> | undefined;
  caller: string;
  memory: ByteBudget;
  calls: CallTracker;
  leases: LeaseHolder | undefined;
  audit: AuditLog | undefined;
}

/** The object browser's results say which tools this caller has: the view offers only those actions. */
export function viewMetaOf(
  offered: readonly { name: string }[],
): (name: string) => { _meta?: Record<string, unknown> } {
  const viewMeta = { [OFFERED_TOOLS_META]: offered.map((t) => t.name) };
  return (name) => (VIEW_TOOLS.has(name) ? { _meta: viewMeta } : {});
}

export function registerOffers(mcp: McpServer, ctx: OfferContext): void {
  const { offered, stores, access, eager, caller, audit } = ctx;
  const offers = (name: string) => offered.some((t) => t.name === name);
  // A caller policy's guards need the definitions: remote mode gives them (deps.tools).
  if (access && !eager) throw new Error("a server with a caller policy needs its tools loaded (ServerDeps.tools)");
  const guardOf = (name: string) =>
    !offers(name) ? undefined : access ? callGuard(access, eager!.get(name)!, {}) : (storage: Storage) => storage;
  const bucketGuard = guardOf("list_buckets");
  const keyGuard = guardOf("list_objects");
  const { bucketAllowed } = stores.default;
  const configuredBuckets = stores.default.info.buckets;
  const lists = {
    buckets: bucketGuard?.(stores.default.storage, stores.default.info.name),
    keys: keyGuard?.(stores.default.storage, stores.default.info.name),
  };
  const auditRead = audit
    ? (entry: Omit<AuditEntry, "caller" | "action">) => audit.write({ caller, action: "resources/read", ...entry })
    : undefined;
  const auditList = audit ? (entry: Omit<AuditEntry, "caller">) => audit.write({ caller, ...entry }) : undefined;
  const readGuard = guardOf("get_object");
  if (readGuard) offerObjectResources(mcp, ctx, { guard: readGuard, bucketGuard, lists, auditRead, auditList });
  // The object browser where its listings are offered; images come from presigned URLs of every store's origin.
  if (offered.some((t) => VIEW_TOOLS.has(t.name))) {
    registerObjectBrowser(mcp, {
      origins: presignOrigins(stores.all.map((s) => s.info.endpointUrl)),
      ...(auditRead ? { audit: auditRead } : {}),
    });
    // Advertised as an extension (2026-07-28's way; a 2025 client reads _meta.ui on the tools and ignores this).
    mcp.server.registerCapabilities({ extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } });
  }
  // Workflow prompts whose tools this caller has, their bucket and key arguments completed as the listing tools may list.
  const names = offered.map((t) => t.name);
  registerPrompts(mcp, names, { lists, configuredBuckets, bucketAllowed, ...(auditList ? { auditList } : {}) });
  // The same recipes as skills, for hosts that load skills (io.modelcontextprotocol/skills).
  registerSkills(mcp, promptsFor(names));
}

type Guard = (storage: Storage, store: string) => Storage;

/** Objects as resources: s3:// URIs name the default store's objects, as with one store; store://NAME/… the others'. */
function offerObjectResources(
  mcp: McpServer,
  ctx: OfferContext,
  with_: {
    guard: Guard;
    bucketGuard: Guard | undefined;
    lists: { buckets: Storage | undefined; keys: Storage | undefined };
    auditRead: ((entry: Omit<AuditEntry, "caller" | "action">) => void) | undefined;
    auditList: ((entry: Omit<AuditEntry, "caller">) => void) | undefined;
  },
): void {
  const { stores, audit } = ctx;
  const { guard, bucketGuard } = with_;
  const otherStores = Object.fromEntries(
    stores.all.slice(1).map((s) => [
      s.info.name,
      {
        storage: guard(s.storage, s.info.name),
        bucketLister: bucketGuard?.(s.storage, s.info.name),
        bucketAllowed: s.bucketAllowed,
        configuredBuckets: s.info.buckets,
        checkBucket: s.checkBucket,
        checkKey: s.checkKey,
      },
    ]),
  );
  const auditing = audit && {
    audit: with_.auditRead!,
    auditRefusal: () => audit.refusal(),
    auditList: with_.auditList!,
  };
  const { bucketAllowed, checkBucket, checkKey } = stores.default;
  registerObjectResources(mcp, {
    storage: guard(stores.default.storage, stores.default.info.name),
    bucketAllowed,
    configuredBuckets: stores.default.info.buckets,
    checkBucket,
    checkKey,
    contentBudget: CONTENT_BUDGET_BYTES,
    memory: ctx.memory,
    calls: ctx.calls,
    lists: with_.lists,
    otherStores,
    ...(ctx.leases ? { leases: ctx.leases } : {}),
    ...auditing,
  });
}
