/**
 * What a server offers, worked out without the MCP SDK: its name and
 * version, its options from the configuration, the stores and the tools this
 * configuration offers (as cards or definitions), its instructions and the
 * capabilities it declares. server.ts builds the SDK server from these; the
 * stdio start answers the first messages from them before the SDK is loaded
 * (startup/early-answers.ts).
 */
import pkg from "../../package.json" with { type: "json" };
import type { CallerAccess } from "../access/index.ts";
import { type PolicyOptions, toolsFor } from "../access/policy.ts";
import type { Config } from "../config/config.ts";
import type { Scope } from "../config/oauth-config.ts";
import { promptsFor } from "../prompts/index.ts";
import type { Storage } from "../storage/index.ts";
import type { ToolFacts } from "../tool-kit/types.ts";
import { ALL_CARDS, JOB_CARDS, STORE_CARDS } from "../tool-registry/cards.ts";
import type { Recheck } from "./jobs/jobs.ts";
import { APP_MIME_TYPE, UI_EXTENSION, VIEW_TOOLS } from "./object-browser.ts";
import { type StoreInfo, Stores, scopeOf } from "./stores.ts";
import { listedTools } from "./tool-list.ts";

/** The skills extension's id (SEP-2640; the SDK's SKILLS_EXTENSION_ID, which offer.ts does not import: it loads without the SDK). */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";
/** The Tasks extension's id (SEP-2663), and 2025-11-25's tasks declaration: tools/call may be task-augmented (tasks.ts). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

export const SERVER_NAME = pkg.name;
export const SERVER_VERSION = pkg.version;

export interface ServerOptions {
  region: string;
  /** Real directories the operator allowed (--allowed-dir); empty = none configured. */
  allowedDirs: string[];
  /** Where relative paths resolve when nothing else is allowed. */
  cwd: string;
  /** The store's endpoint (absent: AWS); with several stores, each store's is in `stores`. */
  endpointUrl?: string;
  /** Hide every tool that writes to the store. */
  readOnly: boolean;
  /** Register delete_object and delete_objects (--allow-delete). */
  allowDelete?: boolean;
  /** Register the tools that change bucket settings and object tags (--allow-admin). */
  allowAdmin?: boolean;
  /** Tool names and groups to offer (--tools); empty or absent: all. */
  tools?: string[];
  /** Bucket allowlist; empty = every bucket. */
  buckets: string[];
  /** The operator opted in to broad directories (/, home, system dirs) for the working-directory default and roots. */
  allowBroadDirs?: boolean;
  /** Where a cut download's temp file is recorded to resume (--state-dir); absent: a cut download is cleaned up. */
  stateDir?: string;
  /**
   * A remote (HTTP) caller: its permissions. A remote server never asks the
   * client anything (stateless: the answer could reach another replica), so
   * no roots and no elicitation; local files only in explicit --allowed-dir.
   */
  remote?: {
    scopes: ReadonlySet<Scope>;
    caller?: string;
    access?: CallerAccess;
    recheck?: Recheck;
    /** Seconds of query time a caller may use an hour (STORE_CALLER_QUERY_SECONDS); 0 or absent: no limit. */
    querySecondsPerHour?: number;
  };
  /** resource_link items in list_objects and truncated reads (default false: see config.ts). */
  resourceLinks?: boolean;
  /** How long a long call runs before it answers with a job handle (--call-budget); 0 or absent: never (no job tools). */
  callBudgetMs?: number;
  /** Jobs one caller may have running at once; the next long call is refused. */
  maxRunningJobs?: number;
  /** The most one query may spill to disk (STORE_QUERY_SPILL_MB); absent: the default for the temp directory. */
  querySpillBytes?: number;
  /**
   * Several stores (stores.ts), the default first, each with its own read-only,
   * deletes and allowlist; absent: one store from region, readOnly,
   * allowDelete and buckets above.
   */
  stores?: StoreInfo[];
}

export const INSTRUCTIONS =
  'Tools for an S3-compatible object store. Find buckets with list_buckets, browse with list_objects (prefix, delimiter "/", paging), ' +
  "read with get_object (mode read, bounded by max_content_size) or save to a local file (mode download), upload local files with upload_file. " +
  "For folders and many objects use upload_directory, download_prefix and copy_prefix (resumable: call again to go on), and survey with storage_usage and find_objects. " +
  "Local paths are limited to the directories the user allowed. Errors say what failed and what to do next.";

export const REMOTE_INSTRUCTIONS =
  'Tools for an S3-compatible object store, served remotely. Find buckets with list_buckets, browse with list_objects (prefix, delimiter "/", paging), ' +
  "read with get_object (bounded by max_content_size). This server's disk is not the user's: to move whole objects, give the user a presign_url link " +
  "(GET to download, PUT to upload). Errors say what failed and what to do next.";

export function policyOf(options: ServerOptions): PolicyOptions {
  return {
    readOnly: options.readOnly,
    allowDelete: options.allowDelete ?? false,
    allowAdmin: options.allowAdmin ?? false,
    tools: options.tools ?? [],
    ...(options.remote ? { scopes: options.remote.scopes, localFiles: options.allowedDirs.length > 0 } : {}),
  };
}

/** The server's options from a configuration (its stores included) and the real allowed directories. */
export function serverOptions(config: Config, allowedDirs: string[]): ServerOptions {
  const stores: StoreInfo[] = config.stores.map((s) => ({
    name: s.name,
    region: s.region,
    endpointUrl: s.endpointUrl,
    credentialSource: s.credentialSource,
    readOnly: s.readOnly,
    allowDelete: s.allowDelete,
    buckets: s.buckets,
  }));
  return {
    region: config.region,
    ...(config.endpointUrl ? { endpointUrl: config.endpointUrl } : {}),
    allowedDirs,
    cwd: process.cwd(),
    readOnly: config.readOnly,
    buckets: config.buckets,
    allowBroadDirs: config.allowBroadDirs,
    allowDelete: config.allowDelete,
    allowAdmin: config.allowAdmin,
    tools: config.tools,
    resourceLinks: config.resourceLinks,
    callBudgetMs: config.callBudgetSeconds * 1000,
    maxRunningJobs: config.maxRunningJobs,
    ...(config.querySpillBytes ? { querySpillBytes: config.querySpillBytes } : {}),
    ...(config.stateDir ? { stateDir: config.stateDir } : {}),
    ...(stores.length > 1 ? { stores } : {}),
  };
}

/** The stores as the server sees them: those given, or the one store of a single-store server. */
export function storesOf(
  options: ServerOptions,
  deps: { storage: Storage; storageOf?(name: string): Storage },
): Stores {
  const infos: StoreInfo[] = options.stores?.length
    ? options.stores
    : [
        {
          name: "default",
          region: options.region,
          endpointUrl: options.endpointUrl,
          credentialSource: "",
          readOnly: options.readOnly,
          allowDelete: options.allowDelete ?? false,
          buckets: options.buckets,
        },
      ];
  const server = policyOf(options);
  return new Stores(
    infos.map((info, i) =>
      scopeOf(info, i === 0 ? deps.storage : (deps.storageOf?.(info.name) ?? deps.storage), server),
    ),
  );
}

/**
 * The tools this configuration offers (policy.ts decides), as cards or as definitions (the same choice from the
 * same facts); the job tools where a call can be handed back.
 */
export function offeredOf<T extends ToolFacts>(
  options: ServerOptions,
  stores: Stores,
  jobs: boolean,
  lists: { all: readonly T[]; stores: readonly T[]; jobs: readonly T[] },
): T[] {
  const access = options.remote?.access;
  const tools = toolsFor(
    stores.several ? [...lists.all, ...lists.stores] : lists.all,
    stores.offering(policyOf(options)),
  ).filter((t) => !access || access.offers(t));
  return jobs && tools.some((t) => t.handsBack) ? [...tools, ...lists.jobs] : tools;
}

/** The instructions a server gives its clients: remote without local files points at presign_url. */
export function instructionsFor(options: Pick<ServerOptions, "remote" | "allowedDirs">): string {
  return options.remote && options.allowedDirs.length === 0 ? REMOTE_INSTRUCTIONS : INSTRUCTIONS;
}

/**
 * The capabilities a server with these tools declares, as the SDK declares them when server.ts registers them: tools;
 * resources for objects (get_object), the object browser's page and the skills' files; completions for the object
 * template and the prompts' arguments; prompts; the object browser as the io.modelcontextprotocol/ui extension and the
 * prompts' recipes as skills (io.modelcontextprotocol/skills); with `tasks` (calls may be handed back as jobs), tasks
 * in both shapes (tasks.ts). (listChanged is the SDK's own default; the lists never change.)
 */
export function capabilitiesFor(offered: readonly string[], tasks = false): Record<string, unknown> {
  const objects = offered.includes("get_object");
  const view = offered.some((name) => VIEW_TOOLS.has(name));
  const prompts = promptsFor(offered).length > 0;
  const extensions = {
    ...(view ? { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } : {}),
    ...(prompts ? { [SKILLS_EXTENSION]: {} } : {}),
    ...(tasks ? { [TASKS_EXTENSION]: {} } : {}),
  };
  return {
    tools: { listChanged: true },
    ...(tasks ? { tasks: TASKS_CAPABILITY } : {}),
    ...(objects || view || prompts ? { resources: { listChanged: true } } : {}),
    ...(objects || prompts ? { completions: {} } : {}),
    ...(prompts ? { prompts: { listChanged: true } } : {}),
    ...(Object.keys(extensions).length > 0 ? { extensions } : {}),
  };
}

/**
 * What a server with these options answers to `initialize` (less the protocol version, which the client's request
 * decides) and to tools/list: the same facts createServer registers with the SDK, worked out without it.
 */
export function firstAnswers(options: ServerOptions, deps: { storage: Storage; storageOf?(name: string): Storage }) {
  const stores = storesOf(options, deps);
  const jobs = (options.callBudgetMs ?? 0) > 0;
  const offered = offeredOf(options, stores, jobs, {
    all: ALL_CARDS,
    stores: STORE_CARDS,
    jobs: JOB_CARDS,
  });
  return {
    serverInfo: { name: SERVER_NAME, version: SERVER_VERSION },
    instructions: instructionsFor(options),
    capabilities: capabilitiesFor(
      offered.map((t) => t.name),
      jobs,
    ),
    tools: listedTools(offered, stores.several ? stores.names : undefined),
    // For a client that declared tasks (2025-11-25), where calls may become tasks: which tools take them.
    taskTools: jobs ? listedTools(offered, stores.several ? stores.names : undefined, true) : undefined,
  };
}
