import { cancelJob } from "./cancel-job.ts";
import { copyObject } from "./copy-object.ts";
import { copyPrefix } from "./copy-prefix.ts";
import { createBucket } from "./create-bucket.ts";
import { deleteBucket } from "./delete-bucket.ts";
import { deleteBucketPolicy } from "./delete-bucket-policy.ts";
import { deleteObject } from "./delete-object.ts";
import { deleteObjects } from "./delete-objects.ts";
import { downloadPrefix } from "./download-prefix.ts";
import { findObjects } from "./find-objects.ts";
import { getBucketSettings } from "./get-bucket-settings.ts";
import { getObject } from "./get-object.ts";
import { getObjectTags } from "./get-object-tags.ts";
import { headObject } from "./head-object.ts";
import { inspectObject } from "./inspect-object.ts";
import { jobStatus } from "./job-status.ts";
import { listBuckets } from "./list-buckets.ts";
import { listJobs } from "./list-jobs.ts";
import { listObjectVersions } from "./list-object-versions.ts";
import { listObjects } from "./list-objects.ts";
import { listStores } from "./list-stores.ts";
import { presignUrl } from "./presign-url.ts";
import { putObject } from "./put-object.ts";
import { putObjectTags } from "./put-object-tags.ts";
import { queryObjects } from "./query-objects.ts";
import { restoreObject } from "./restore-object.ts";
import { searchObjects } from "./search-objects.ts";
import { setBucketCors } from "./set-bucket-cors.ts";
import { setBucketLifecycle } from "./set-bucket-lifecycle.ts";
import { setBucketPolicy } from "./set-bucket-policy.ts";
import { setBucketVersioning } from "./set-bucket-versioning.ts";
import { setObjectLock } from "./set-object-lock.ts";
import { storageUsage } from "./storage-usage.ts";
import type { ToolDefinition } from "./types.ts";
import { uploadDirectory } from "./upload-directory.ts";
import { uploadFile } from "./upload-file.ts";

/** Every tool, in the order clients show them: the six of the spec first, then the object toolkit, the bulk tools, bucket settings and tags. */
export const ALL_TOOLS: readonly ToolDefinition[] = [
  listBuckets,
  listObjects,
  getObject,
  uploadFile,
  createBucket,
  deleteBucket,
  headObject,
  putObject,
  copyObject,
  presignUrl,
  listObjectVersions,
  deleteObject,
  deleteObjects,
  uploadDirectory,
  downloadPrefix,
  copyPrefix,
  storageUsage,
  findObjects,
  searchObjects,
  inspectObject,
  queryObjects,
  getBucketSettings,
  getObjectTags,
  putObjectTags,
  setBucketVersioning,
  setBucketLifecycle,
  setBucketCors,
  setBucketPolicy,
  deleteBucketPolicy,
  setObjectLock,
  restoreObject,
];

/** Tools offered only with several stores (stores.ts): a single-store server's list stays as it was. */
export const STORE_TOOLS: readonly ToolDefinition[] = [listStores];
/** Offered wherever a call can be handed back as a job (the call budget is on and a long tool is offered). */
export const JOB_TOOLS: readonly ToolDefinition[] = [jobStatus, cancelJob, listJobs];

/** What a job handle looks like in a long tool's answer (server.ts widens their output schemas with it). */
export { jobShape } from "./job-status.ts";

/** Every tool a server can offer, for --tools checks and the schemas built into the binary. */
export const EVERY_TOOL: readonly ToolDefinition[] = [...ALL_TOOLS, ...STORE_TOOLS, ...JOB_TOOLS];
