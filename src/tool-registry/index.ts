import type { ToolDefinition } from "../tool-kit/types.ts";
import { cancelJob } from "../tools/cancel-job.ts";
import { copyObject } from "../tools/copy-object.ts";
import { copyPrefix } from "../tools/copy-prefix.ts";
import { createBucket } from "../tools/create-bucket.ts";
import { deleteBucket } from "../tools/delete-bucket.ts";
import { deleteBucketPolicy } from "../tools/delete-bucket-policy.ts";
import { deleteObject } from "../tools/delete-object.ts";
import { deleteObjects } from "../tools/delete-objects.ts";
import { downloadPrefix } from "../tools/download-prefix.ts";
import { findObjects } from "../tools/find-objects.ts";
import { getBucketSettings } from "../tools/get-bucket-settings.ts";
import { getObject } from "../tools/get-object.ts";
import { getObjectTags } from "../tools/get-object-tags.ts";
import { headObject } from "../tools/head-object.ts";
import { inspectObject } from "../tools/inspect-object.ts";
import { jobStatus } from "../tools/job-status.ts";
import { listBuckets } from "../tools/list-buckets.ts";
import { listJobs } from "../tools/list-jobs.ts";
import { listObjectVersions } from "../tools/list-object-versions.ts";
import { listObjects } from "../tools/list-objects.ts";
import { listStores } from "../tools/list-stores.ts";
import { presignUrl } from "../tools/presign-url.ts";
import { putObject } from "../tools/put-object.ts";
import { putObjectTags } from "../tools/put-object-tags.ts";
import { queryObjects } from "../tools/query-objects.ts";
import { restoreObject } from "../tools/restore-object.ts";
import { searchObjects } from "../tools/search-objects.ts";
import { setBucketCors } from "../tools/set-bucket-cors.ts";
import { setBucketLifecycle } from "../tools/set-bucket-lifecycle.ts";
import { setBucketPolicy } from "../tools/set-bucket-policy.ts";
import { setBucketVersioning } from "../tools/set-bucket-versioning.ts";
import { setObjectLock } from "../tools/set-object-lock.ts";
import { storageUsage } from "../tools/storage-usage.ts";
import { uploadDirectory } from "../tools/upload-directory.ts";
import { uploadFile } from "../tools/upload-file.ts";

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
export { jobShape } from "../tools/job-status.ts";

/** Every tool a server can offer, for --tools checks and the schemas built into the binary. */
export const EVERY_TOOL: readonly ToolDefinition[] = [...ALL_TOOLS, ...STORE_TOOLS, ...JOB_TOOLS];
