/** The storage layer: the only code that talks to S3 (and imports the AWS SDK, lazily). */
export { createS3Storage } from "./s3-storage.ts";
export type * from "./types.ts";
