import type { z } from "zod";
import type { LocalFiles } from "../local/index.ts";
import type { ConfirmAction, Confirmation } from "../runtime/confirmation.ts";
import type { Logger } from "../runtime/log.ts";
import type { ProgressReporter } from "../runtime/progress.ts";
import type { Storage } from "../storage/index.ts";
import type { ToolAddresses } from "./addresses.ts";

export type { ConfirmAction, Confirmation } from "../runtime/confirmation.ts";

/** What the server knows of a store: never a credential. */
export interface StoreInfo {
  name: string;
  region: string;
  endpointUrl: string | undefined;
  /** Where its credentials come from, for list_stores ("AWS profile r2", "STORE_R2_ACCESS_KEY_ID / …"); never a key. */
  credentialSource: string;
  readOnly: boolean;
  allowDelete: boolean;
  /** Bucket allowlist; empty = every bucket. */
  buckets: string[];
}

/** What a tool handler may use; tools never import the AWS SDK or node:fs. */
export interface ToolContext {
  storage: Storage;
  files: LocalFiles;
  /** Whether the operator's bucket allowlist (if any) admits this bucket. */
  bucketAllowed(bucket: string): boolean;
  /** The operator's bucket allowlist for this store (--bucket, STORE_<NAME>_BUCKETS); empty: every bucket. */
  configuredBuckets: readonly string[];
  /** Aborted when the client cancels the request. */
  signal: AbortSignal;
  log: Logger;
  region: string;
  /** Bytes of serialized content (text, base64) one result may carry; more must be cut or omitted. */
  contentBudget: number;
  /**
   * Asks the user (not the model) to confirm, with the form for `action`,
   * where the client supports elicitation; "not_asked" where it cannot (the
   * model's confirm: true stands). Only "accepted" and "not_asked" apply.
   */
  confirmWithUser(action: ConfirmAction, message: string): Promise<Confirmation>;
  /** Progress for transfers (a no-op unless the client asked with a progress token). */
  progress: ProgressReporter;
  /** Add resource_link items for objects (some clients cannot pass them to their model: STORE_RESOURCE_LINKS=false). */
  resourceLinks: boolean;
  /** Every store of a server with several, the default first (list_stores); absent with one. */
  stores?: readonly StoreInfo[];
  /** The caller's jobs (calls handed back after the call budget), for the job tools; absent where there are none. */
  jobs?: CallerJobs;
  /** The call budget (--call-budget), in ms: how long job_status waits at most. */
  callBudgetMs?: number;
  /** The store a copy reads from, when the call names another one (source_store; tools with `sourceStore`). */
  sourceStore?: { name: string; storage: Storage };
  /** The most one query may spill to disk, as the operator set it (STORE_QUERY_SPILL_MB); absent: the default. */
  querySpillBytes?: number;
  /** This call: who makes it, and the job it runs as once handed back (to name it in another call's refusal). */
  call: CallIdentity;
  /** Where several callers share the server (remote mode): what they share (query slots) is held fairly; absent with one. */
  share?: CallerShare;
}

/** Who makes a call, and the job it runs as. */
export interface CallIdentity {
  /** An opaque id: one caller, one id, whatever the kind of credential. */
  owner: string;
  /** The job this call runs as, once it was handed back; undefined before (or never). */
  job(): string | undefined;
}

/** What a caller among several may use of what they share. */
export interface CallerShare {
  /** Seconds of query time the caller may use an hour; 0: no limit. */
  querySecondsPerHour: number;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** interrupted: its replica stopped before it ended (jobs shared across replicas, --state-url). */
export type JobState = "running" | "done" | "failed" | "cancelled" | "interrupted";

/** What a job has done so far, in the units its tool reports. */
export interface JobProgress {
  done_bytes?: number;
  total_bytes?: number;
  done_objects?: number;
  total_objects?: number;
  /** The tool's own words for it. */
  message?: string;
}

/** A job as the job tools show it. */
export interface JobView {
  id: string;
  tool: string;
  state: JobState;
  started_at: string;
  ended_at?: string;
  progress: JobProgress;
}

/** The answer a handed-back call gave when its work ended: exactly what the call would have answered. */
export interface JobAnswer {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** One caller's jobs (an id of another caller's is unknown here). */
export interface CallerJobs {
  /** Waits up to `waitMs` for the job to end; undefined for an unknown id. */
  status(id: string, waitMs: number, signal: AbortSignal): Promise<{ job: JobView; result?: JobAnswer } | undefined>;
  /** Stops it with a cancelled call's clean-up, and waits for that. */
  cancel(id: string): Promise<JobView | undefined>;
  list(): Promise<JobView[]>;
}

/** MCP content blocks a tool may return besides its text summary. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "resource"; resource: { uri: string; mimeType: string; blob: string } }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string; size?: number };

export interface ToolOutput<S> {
  /** Content for the model; the server appends nothing. */
  content: ContentBlock[];
  structured: S;
}

/** What a tool does, for the policy: --tools selects by group; "delete" needs --allow-delete; "admin" manages buckets. */
export type ToolGroup = "read" | "write" | "delete" | "admin";

/** One tool, as data: the server registers it, tests read it. */
export interface ToolDefinition<In extends z.ZodObject = z.ZodObject, Out extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  inputSchema: In;
  outputSchema: Out;
  annotations: ToolAnnotations;
  group: ToolGroup;
  /** Changes the store (not just local files): left out in read-only mode. */
  writesToStore: boolean;
  /** Changes a bucket's settings or tags: registered only with --allow-admin (STORE_ALLOW_ADMIN). */
  needsAllowAdmin?: boolean;
  /** The result's field that is the bytes this call moved (the audit line's `bytes`); absent: bytes, returned_bytes or bytes_done. */
  bytesField?: string;
  /** Whether this call deletes (a mirror's delete_extraneous, a move, a lifecycle rule that expires objects): needs --allow-delete and the delete permission. */
  deletes?(args: z.output<In>): boolean;
  /** What makes such a call delete, for the refusal: "delete_extraneous or move" unless said. */
  deletesBy?: string;
  /** For a tool offered in read-only mode: whether this call would let anyone write (refused then). */
  writes?(args: z.output<In>): boolean;
  /**
   * Reads or writes the server's local files: "always", or for some calls.
   * A remote server without --allowed-dir leaves such tools out and refuses such calls.
   */
  localFiles?: "always" | ((args: z.output<In>) => boolean);
  /** Appended to the description on a remote server without local files: how its user moves bytes instead. */
  remoteNote?: string;
  /** A job tool (job_status, cancel_job, list_jobs): touches no store, offered wherever a call can be handed back. */
  aboutJobs?: true;
  /** Can run long: past the call budget the call answers with a job handle and the work goes on (mcp/tool-call.ts). */
  handsBack?: true | ((args: z.output<In>) => boolean);
  /** About every store at once (list_stores): takes no `store` parameter, even with several stores. */
  storeless?: boolean;
  /** With several stores, also takes `source_store`: the store its source_bucket is in (the server resolves it into ctx.sourceStore). */
  sourceStore?: boolean;
  /** Optional string parameters where `""` is a real value (elsewhere a client's `""` means "not given"; see sdk-hooks.ts). */
  emptyIsValue?: string[];
  /** Bytes a call with these arguments may hold in memory at once; reserved from the server's budget before it runs. */
  heldBytes?(args: z.output<In>): number;
  handler(args: z.output<In>, ctx: ToolContext): Promise<ToolOutput<z.output<Out>>>;
}

/**
 * What is known of a tool without loading its module (its zod schemas would
 * cost a share of every start): enough to offer it, list it and check --tools.
 * Built into the binary from the definitions (cards.macro.ts); a function
 * field of the definition is only said to exist here.
 */
export interface ToolCard
  extends Pick<
    ToolDefinition,
    | "name"
    | "title"
    | "description"
    | "annotations"
    | "group"
    | "writesToStore"
    | "needsAllowAdmin"
    | "remoteNote"
    | "aboutJobs"
    | "storeless"
    | "sourceStore"
  > {
  /** Some (or every) call can be handed back as a job. */
  handsBack?: true;
  /** "always": every call uses local files; "sometimes": some do (the definition says which). */
  localFiles?: "always" | "sometimes";
  /** The arguments that name a bucket or key the call touches (addresses.ts), checked against the allowlist before it runs. */
  addresses?: ToolAddresses;
}

/** What the policy reads to offer a tool: a card or the definition itself. */
export type ToolFacts = ToolCard | ToolDefinition;

/** Keeps each tool's argument and result types while typing the list loosely. */
export function defineTool<In extends z.ZodObject, Out extends z.ZodObject>(
  tool: ToolDefinition<In, Out>,
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** A result whose content is one text block. */
export function textOutput<S>(text: string, structured: S): ToolOutput<S> {
  return { content: [{ type: "text", text }], structured };
}
