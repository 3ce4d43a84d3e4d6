import { createBucket } from "./create-bucket.ts";
import { deleteBucket } from "./delete-bucket.ts";
import { getObject } from "./get-object.ts";
import { listBuckets } from "./list-buckets.ts";
import { listObjects } from "./list-objects.ts";
import type { ToolDefinition } from "./types.ts";
import { uploadFile } from "./upload-file.ts";

/** Every tool, in the order clients show them. */
export const ALL_TOOLS: readonly ToolDefinition[] = [listBuckets, listObjects, getObject, uploadFile, createBucket, deleteBucket];
