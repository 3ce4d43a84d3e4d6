/**
 * Remote mode's MCP servers: one for each request, with the tools its caller
 * may use (the policy in force when the request came, their scopes, their own
 * STS credentials with pass-through), kept afterwards for the same caller's
 * next request of the same era (server-pool.ts). A 2025 initialize leaves
 * the client's capabilities on its server: that one is not kept.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { CallerAccess } from "../access/caller-access.ts";
import { callRefusal } from "../access/index.ts";
import type { PassThrough } from "../access/pass-through.ts";
import type { PolicyHolder } from "../access/policy-holder.ts";
import type { Caller } from "../auth/index.ts";
import type { HttpConfig } from "../config/http-config.ts";
import { createServer, type ServerDeps, type ServerOptions } from "../mcp/server.ts";
import { LeaseSlot } from "../runtime/memory.ts";
import type { Storage } from "../storage/index.ts";
import { EVERY_TOOL } from "../tool-registry/index.ts";
import type { HttpDeps } from "./http-types.ts";
import { ServerPool } from "./server-pool.ts";

/** Idle servers kept in all: a few megabytes together, room for the requests a busy replica has in flight at once. */
const MAX_IDLE_SERVERS = 128;

/** What of a caller their server is built from: the policy's view of them and their scopes (never the token). */
const callerKey = (c: Caller) => JSON.stringify([c.id, [...c.scopes], c.label, c.sub, c.claims, c.tokenScopes]);

type Storages = { storage: Storage; storageOf(name: string): Storage };

export interface CallerServersDeps {
  options: ServerOptions;
  /** What every server of the process shares (the log, calls, memory, jobs, tools, sealing key, audit), but its storages and leases. */
  shared: Omit<ServerDeps, "storage" | "storageOf" | "leases">;
  storages: Storages;
  limits: HttpConfig["limits"];
  policy: PolicyHolder | undefined;
  passThrough: PassThrough | undefined;
  defaultStore: string;
}

export function callerServers(deps: CallerServersDeps): HttpDeps["serverFor"] {
  // Servers that answered a request, kept for the caller's next one (building one is a sixth of a call's CPU).
  const pool = new ServerPool<{ slot: LeaseSlot; mcp: McpServer }>(MAX_IDLE_SERVERS);
  return (caller, leases, request) => {
    const callerStorages = deps.passThrough ? deps.passThrough.storagesFor(caller, deps.storages) : deps.storages;
    const rules = deps.policy?.current;
    const kept = request.method !== "initialize";
    const key = `${request.era}\n${callerKey(caller)}`;
    const basis = [rules, callerStorages];
    const served = (kept && pool.take(key, basis)) || buildFor(deps, caller, callerStorages);
    served.slot.target = leases;
    // Closed once its request is answered (or the client left): then it waits for the next request of its kind.
    let done = false;
    served.mcp.server.onclose = () => {
      if (done) return;
      done = true;
      served.slot.target = undefined;
      if (kept) pool.put(key, basis, served);
    };
    return served.mcp;
  };
}

function buildFor(deps: CallerServersDeps, caller: Caller, storages: Storages): { slot: LeaseSlot; mcp: McpServer } {
  const { policy, defaultStore } = deps;
  const rules = policy?.current;
  const slot = new LeaseSlot();
  const mcp = createServer(
    // With a policy, the caller gets what the rules naming them grant (the policy in force when the request came).
    {
      ...deps.options,
      remote: {
        scopes: caller.scopes,
        caller: caller.id,
        querySecondsPerHour: deps.limits.querySeconds,
        ...(rules ? { access: new CallerAccess(rules, caller) } : {}),
        // Judged by the policy in force when asked (a job's call, on a change and before its result is handed over).
        ...(policy
          ? {
              recheck: (name: string, args: Record<string, unknown>) =>
                recheckCall(new CallerAccess(policy.current, caller), name, args, defaultStore),
            }
          : {}),
      },
    },
    { ...storages, ...deps.shared, leases: slot },
  );
  return { slot, mcp };
}

/** Why the caller's current policy refuses a call of the tool named `name`, if it does. */
function recheckCall(access: CallerAccess, name: string, args: Record<string, unknown>, defaultStore: string) {
  const tool = EVERY_TOOL.find((t) => t.name === name);
  return tool && !tool.aboutJobs ? callRefusal(access, tool, args, defaultStore) : undefined;
}
