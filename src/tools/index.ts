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

/** Every tool, in the order clients show them: the six of the spec first, then the object toolkit. */
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
];
