import { copyObject } from "./copy-object.ts";
import { createBucket } from "./create-bucket.ts";
import { deleteBucket } from "./delete-bucket.ts";
import { deleteObject } from "./delete-object.ts";
import { deleteObjects } from "./delete-objects.ts";
import { getObject } from "./get-object.ts";
import { headObject } from "./head-object.ts";
import { listBuckets } from "./list-buckets.ts";
import { listObjectVersions } from "./list-object-versions.ts";
import { listObjects } from "./list-objects.ts";
import { presignUrl } from "./presign-url.ts";
import { putObject } from "./put-object.ts";
import type { ToolDefinition } from "./types.ts";
import { uploadFile } from "./upload-file.ts";
import { uploadDirectory } from "./upload-directory.ts";
import { downloadPrefix } from "./download-prefix.ts";
import { copyPrefix } from "./copy-prefix.ts";
import { storageUsage } from "./storage-usage.ts";
import { findObjects } from "./find-objects.ts";

/** Every tool, in the order clients show them: the six of the spec first, then the object toolkit, then the bulk tools. */
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
];
