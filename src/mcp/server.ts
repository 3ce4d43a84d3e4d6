import { randomBytes } from "node:crypto";
import { type jsonSchemaValidator, McpServer } from "@modelcontextprotocol/server";
import { effectiveAllowedDirs } from "../local/allowed.ts";
import { createLocalFiles } from "../local/index.ts";
import { type AuditLog, refusedEntry } from "../runtime/audit.ts";
import { CallTracker } from "../runtime/lifecycle.ts";
import type { Logger } from "../runtime/log.ts";
import { ByteBudget, type LeaseHolder } from "../runtime/memory.ts";
import { telemetry } from "../runtime/telemetry.ts";
import type { Storage } from "../storage/index.ts";
import { addressesOf } from "./call/addresses.ts";
import { trackClientRoots } from "./client-roots.ts";
import { confirmationCodec, userConfirmation } from "./confirmations.ts";
import { serveTasks } from "./jobs/tasks.ts";
import { LazyJsonSchemaValidator } from "./lazy-validator.ts";
import { instructionsFor, offeredOf, SERVER_NAME, SERVER_VERSION, type ServerOptions, storesOf } from "./offer.ts";
import { measureRequests } from "./request-telemetry.ts";
import { installSdkHooks, type RefusedCall } from "./sdk-hooks.ts";
import { registerOffers, viewMetaOf } from "./server-offers.ts";
import type { CallEnvironment } from "./tool-call.ts";
import { registerTools, type ToolModule } from "./tool-registration.ts";

export { SERVER_NAME, SERVER_VERSION, type ServerOptions, serverOptions } from "./offer.ts";
export { describeCall } from "./tool-call.ts";

import { keptTransfersIn } from "../runtime/kept-transfers.ts";
import { ALL_CARDS, JOB_CARDS, STORE_CARDS } from "../tool-registry/cards.ts";
import { JobRegistry } from "./jobs/jobs.ts";

export interface ServerDeps {
  /** The default store's storage. */
  storage: Storage;
  /** Each store's storage, by name, with several stores. */
  storageOf?(name: string): Storage;
  log: Logger;
  /** Bytes calls in flight may hold at once; a fresh budget of READ_MEMORY_BUDGET when omitted. */
  memory?: ByteBudget;
  /** When the transport reports answers as written: reservations are held until then, not just until the handler returns. */
  leases?: LeaseHolder;
  /** Lets shutdown cancel and await calls in flight; a fresh one when omitted. */
  calls?: CallTracker;
  /** One validator for every server of the process: the SDK builds an Ajv instance per server otherwise, on every HTTP request. */
  jsonSchemaValidator?: jsonSchemaValidator;
  /** --audit-log: a line per tool call and resource read. */
  audit?: AuditLog;
  /** Where handed-back calls go on: one per process (remote mode builds a server per request); a fresh one when omitted. */
  jobs?: JobRegistry;
  /**
   * The tool definitions, loaded: the tools then register at once (remote mode, which builds a server per request,
   * and a caller policy, whose guards need them). Absent: they load and register on the first call (a stdio start
   * does not pay for their schemas).
   */
  tools?: ToolModule;
  /** The key 2026-07-28 questions' states are sealed with: one every replica shares (remote.ts); this process's own when absent. */
  confirmationKey?: Uint8Array;
}

/** A process's own key, for a server whose every round reaches this process (stdio). */
const PROCESS_KEY = randomBytes(32);

export type { ToolModule } from "./tool-registration.ts";

/**
 * Bytes all calls in flight may hold at once, from the start of a call until
 * its answer is written out. A maximum read (10 MiB) holds about four times
 * its size (buffer, text, escapes or base64, serialized answer), so three run
 * at a time and the rest queue (test/e2e/response-budget.test.ts: 20 parallel
 * maximum reads stay under 512 MB).
 */
export const READ_MEMORY_BUDGET = 120 * 1024 * 1024;

/** Builds an MCP server with the tools registered; no I/O happens until a client connects. */
export function createServer(options: ServerOptions, deps: ServerDeps): McpServer {
  const instructions = instructionsFor(options);
  const caller = options.remote?.caller ?? (options.remote ? "anonymous" : "local");
  // A 2026-07-28 question's state, sealed to this server's caller (replicas share the key: deps.confirmationKey).
  const codec = confirmationCodec(deps.confirmationKey ?? PROCESS_KEY, caller);
  const mcp = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      instructions,
      capabilities: { tools: {} },
      jsonSchemaValidator: deps.jsonSchemaValidator ?? new LazyJsonSchemaValidator(),
      requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
    },
  );
  const { log } = deps;
  const calls = deps.calls ?? new CallTracker();
  const memory = deps.memory ?? ownBudget();

  const files = filesFor(mcp, options, log);
  const stores = storesOf(options, deps);
  const access = options.remote?.access;
  const storeInfos = stores.several ? stores.all.map((s) => s.info) : undefined;

  const confirmWithUser = userConfirmation(mcp, options.remote !== undefined, codec);
  const callBudgetMs = options.callBudgetMs ?? 0;
  const jobs =
    callBudgetMs > 0
      ? (deps.jobs ??
        watchedJobs(new JobRegistry(Date.now, undefined, undefined, { maxRunning: options.maxRunningJobs })))
      : undefined;
  const recheck = options.remote?.recheck;
  const env: CallEnvironment = {
    stores,
    files,
    log,
    calls,
    memory,
    confirmWithUser,
    caller,
    callBudgetMs,
    recheck,
    jobs,
    resourceLinks: options.resourceLinks ?? false,
    access,
    ...(options.querySpillBytes ? { querySpillBytes: options.querySpillBytes } : {}),
    // Several callers share this process: what they share (query slots) is shared fairly.
    ...(options.remote ? { shared: { querySecondsPerHour: options.remote.querySecondsPerHour ?? 0 } } : {}),
    storeInfos,
    leases: deps.leases,
    audit: deps.audit,
  };

  const offered = offeredOf(options, stores, jobs !== undefined, {
    all: ALL_CARDS,
    stores: STORE_CARDS,
    jobs: JOB_CARDS,
  });
  const { eager, registered } = registerTools(mcp, {
    env,
    storeNames: stores.several ? stores.names : undefined,
    jobs: jobs !== undefined,
    viewMeta: viewMetaOf(offered),
    ...(deps.tools && {
      loaded: {
        tools: offeredOf(options, stores, jobs !== undefined, {
          all: deps.tools.ALL_TOOLS,
          stores: deps.tools.STORE_TOOLS,
          jobs: deps.tools.JOB_TOOLS,
        }),
        jobShape: deps.tools.jobShape,
      },
    }),
  });
  registerOffers(mcp, {
    offered,
    stores,
    access,
    eager,
    caller,
    memory,
    calls,
    leases: deps.leases,
    audit: deps.audit,
  });
  const refusedCall: RefusedCall | undefined =
    deps.audit &&
    ((name, args, id, code) => deps.audit!.write(refusedEntry(caller, name, args, code, id, addressesOf(name))));
  // Calls that may be handed back as jobs may be asked for as tasks too (tasks.ts): the same registry behind both.
  if (jobs) serveTasks(mcp, { jobs, caller, ...(recheck ? { recheck } : {}) });
  installSdkHooks(mcp, offered, stores.several ? stores.names : undefined, refusedCall, registered, jobs !== undefined);
  measureRequests(mcp);
  return mcp;
}

/** The local files a call may touch: client roots narrow the operator's directories (client-roots.ts); a remote server uses exactly --allowed-dir. */
function filesFor(mcp: McpServer, options: ServerOptions, log: Logger) {
  const clientRoots = options.remote ? async () => undefined : trackClientRoots(mcp.server, log);
  return createLocalFiles(
    async () => {
      if (options.remote) return { dirs: options.allowedDirs, problem: "This remote server has no --allowed-dir." };
      const state = await clientRoots();
      if (state && "problem" in state) return { dirs: [], problem: state.problem };
      return effectiveAllowedDirs(options.allowedDirs, state?.roots, options.cwd, options.allowBroadDirs);
    },
    undefined,
    options.stateDir ? keptTransfersIn(options.stateDir, (m) => log.warn(m)) : undefined,
  );
}

/** A memory budget of this server's own (stdio), in the operator's metrics. */
function ownBudget(): ByteBudget {
  const memory = new ByteBudget(READ_MEMORY_BUDGET);
  telemetry().watch("memory.budget.used", () => memory.inUse);
  return memory;
}

/** A job registry, in the operator's metrics. */
export function watchedJobs(jobs: JobRegistry): JobRegistry {
  telemetry().watch("jobs.running", () => jobs.running);
  return jobs;
}
