/**
 * Each tool's definition by name, loaded on its own: a server's first call of
 * a tool loads that tool's module and what it imports, not every tool's
 * schemas (a stdio server that answers one download need not build the other
 * thirty). index.ts lists the same tools for what needs them all (remote
 * mode, the cards built into the binary); a unit test holds the two to the
 * same names and the same definitions.
 */
import type { ToolDefinition } from "../tool-kit/types.ts";

export const TOOL_LOADERS: Readonly<Record<string, () => Promise<ToolDefinition>>> = {
  cancel_job: () => import("../tools/cancel-job.ts").then((m) => m.cancelJob),
  copy_object: () => import("../tools/copy-object.ts").then((m) => m.copyObject),
  copy_prefix: () => import("../tools/copy-prefix.ts").then((m) => m.copyPrefix),
  create_bucket: () => import("../tools/create-bucket.ts").then((m) => m.createBucket),
  delete_bucket: () => import("../tools/delete-bucket.ts").then((m) => m.deleteBucket),
  delete_bucket_policy: () => import("../tools/delete-bucket-policy.ts").then((m) => m.deleteBucketPolicy),
  delete_object: () => import("../tools/delete-object.ts").then((m) => m.deleteObject),
  delete_objects: () => import("../tools/delete-objects.ts").then((m) => m.deleteObjects),
  download_prefix: () => import("../tools/download-prefix.ts").then((m) => m.downloadPrefix),
  find_objects: () => import("../tools/find-objects.ts").then((m) => m.findObjects),
  get_bucket_settings: () => import("../tools/get-bucket-settings.ts").then((m) => m.getBucketSettings),
  get_object: () => import("../tools/get-object.ts").then((m) => m.getObject),
  get_object_tags: () => import("../tools/get-object-tags.ts").then((m) => m.getObjectTags),
  head_object: () => import("../tools/head-object.ts").then((m) => m.headObject),
  inspect_object: () => import("../tools/inspect-object.ts").then((m) => m.inspectObject),
  job_status: () => import("../tools/job-status.ts").then((m) => m.jobStatus),
  list_buckets: () => import("../tools/list-buckets.ts").then((m) => m.listBuckets),
  list_jobs: () => import("../tools/list-jobs.ts").then((m) => m.listJobs),
  list_object_versions: () => import("../tools/list-object-versions.ts").then((m) => m.listObjectVersions),
  list_objects: () => import("../tools/list-objects.ts").then((m) => m.listObjects),
  list_stores: () => import("../tools/list-stores.ts").then((m) => m.listStores),
  presign_url: () => import("../tools/presign-url.ts").then((m) => m.presignUrl),
  put_object: () => import("../tools/put-object.ts").then((m) => m.putObject),
  put_object_tags: () => import("../tools/put-object-tags.ts").then((m) => m.putObjectTags),
  restore_object: () => import("../tools/restore-object.ts").then((m) => m.restoreObject),
  set_object_lock: () => import("../tools/set-object-lock.ts").then((m) => m.setObjectLock),
  query_objects: () => import("../tools/query-objects.ts").then((m) => m.queryObjects),
  search_objects: () => import("../tools/search-objects.ts").then((m) => m.searchObjects),
  set_bucket_cors: () => import("../tools/set-bucket-cors.ts").then((m) => m.setBucketCors),
  set_bucket_lifecycle: () => import("../tools/set-bucket-lifecycle.ts").then((m) => m.setBucketLifecycle),
  set_bucket_policy: () => import("../tools/set-bucket-policy.ts").then((m) => m.setBucketPolicy),
  set_bucket_versioning: () => import("../tools/set-bucket-versioning.ts").then((m) => m.setBucketVersioning),
  storage_usage: () => import("../tools/storage-usage.ts").then((m) => m.storageUsage),
  upload_directory: () => import("../tools/upload-directory.ts").then((m) => m.uploadDirectory),
  upload_file: () => import("../tools/upload-file.ts").then((m) => m.uploadFile),
};

/** What a job handle looks like in a long tool's answer (server.ts widens their output schemas with it). */
export const loadJobShape = () => import("../tools/job-status.ts").then((m) => m.jobShape);
