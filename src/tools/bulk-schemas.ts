import { z } from "zod";

/** Schema fragments the bulk tools share. */

export const DEFAULT_BULK_OBJECTS = 10_000;
export const BULK_OBJECTS_CAP = 1_000_000;
/** Items worked on at once: small objects are bound by the request rate, not the bandwidth. */
export const BULK_CONCURRENCY = 16;
/** Memory a bulk call reserves from the server's budget (parts and small files in flight). */
export const BULK_HELD_BYTES = 32 * 1024 * 1024;

export const maxObjects = z
  .number()
  .int()
  .min(1)
  .max(BULK_OBJECTS_CAP)
  .describe(`Transfers one call makes (default ${DEFAULT_BULK_OBJECTS}); call again with the same arguments for the rest.`);

export const skipUnchanged = z.boolean().describe("Skip objects whose content is unchanged (default true): same size and MD5, or size and time for multipart objects.");
export const dryRun = z.boolean().describe("true: only report what would be done.");
export const confirm = z.boolean().describe("Needed with delete_extraneous/move: true to delete (else the whole call is a dry run).");
