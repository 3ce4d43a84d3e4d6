/**
 * Each tool's definition by name, loaded on its own: a server's first call of
 * a tool loads that tool's module and what it imports, not every tool's
 * schemas (a stdio server that answers one download need not build the other
 * thirty). index.ts lists the same tools for what needs them all (remote
 * mode, the cards built into the binary); a unit test holds the two to the
 * same names and the same definitions.
 */
import type { ToolDefinition } from "./types.ts";

export const TOOL_LOADERS: Readonly<Record<string, () => Promise<ToolDefinition>>> = {
  cancel_job: () => import("./cancel-job.ts").then((m) => m.cancelJob),
  copy_object: () => import("./copy-object.ts").then((m) => m.copyObject),
  copy_prefix: () => import("./copy-prefix.ts").then((m) => m.copyPrefix),
  create_bucket: () => import("./create-bucket.ts").then((m) => m.createBucket),
  delete_bucket: () => import("./delete-bucket.ts").then((m) => m.deleteBucket),
  delete_bucket_policy: () => import("./delete-bucket-policy.ts").then((m) => m.deleteBucketPolicy),
  delete_object: () => import("./delete-object.ts").then((m) => m.deleteObject),
  delete_objects: () => import("./delete-objects.ts").then((m) => m.deleteObjects),
  download_prefix: () => import("./download-prefix.ts").then((m) => m.downloadPrefix),
  find_objects: () => import("./find-objects.ts").then((m) => m.findObjects),
  get_bucket_settings: () => import("./get-bucket-settings.ts").then((m) => m.getBucketSettings),
  get_object: () => import("./get-object.ts").then((m) => m.getObject),
  get_object_tags: () => import("./get-object-tags.ts").then((m) => m.getObjectTags),
  head_object: () => import("./head-object.ts").then((m) => m.headObject),
  inspect_object: () => import("./inspect-object.ts").then((m) => m.inspectObject),
  job_status: () => import("./job-status.ts").then((m) => m.jobStatus),
  list_buckets: () => import("./list-buckets.ts").then((m) => m.listBuckets),
  list_jobs: () => import("./list-jobs.ts").then((m) => m.listJobs),
  list_object_versions: () => import("./list-object-versions.ts").then((m) => m.listObjectVersions),
  list_objects: () => import("./list-objects.ts").then((m) => m.listObjects),
  list_stores: () => import("./list-stores.ts").then((m) => m.listStores),
  presign_url: () => import("./presign-url.ts").then((m) => m.presignUrl),
  put_object: () => import("./put-object.ts").then((m) => m.putObject),
  put_object_tags: () => import("./put-object-tags.ts").then((m) => m.putObjectTags),
  restore_object: () => import("./restore-object.ts").then((m) => m.restoreObject),
  set_object_lock: () => import("./set-object-lock.ts").then((m) => m.setObjectLock),
  query_objects: () => import("./query-objects.ts").then((m) => m.queryObjects),
  search_objects: () => import("./search-objects.ts").then((m) => m.searchObjects),
  set_bucket_cors: () => import("./set-bucket-cors.ts").then((m) => m.setBucketCors),
  set_bucket_lifecycle: () => import("./set-bucket-lifecycle.ts").then((m) => m.setBucketLifecycle),
  set_bucket_policy: () => import("./set-bucket-policy.ts").then((m) => m.setBucketPolicy),
  set_bucket_versioning: () => import("./set-bucket-versioning.ts").then((m) => m.setBucketVersioning),
  storage_usage: () => import("./storage-usage.ts").then((m) => m.storageUsage),
  upload_directory: () => import("./upload-directory.ts").then((m) => m.uploadDirectory),
  upload_file: () => import("./upload-file.ts").then((m) => m.uploadFile),
};

/** What a job handle looks like in a long tool's answer (server.ts widens their output schemas with it). */
export const loadJobShape = () => import("./job-status.ts").then((m) => m.jobShape);
