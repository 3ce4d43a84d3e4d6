import { z } from "zod";

/** Schema fragments the bulk tools share. */

export const DEFAULT_BULK_OBJECTS = 10_000;
export const BULK_OBJECTS_CAP = 1_000_000;
/** Items worked on at once: small objects are bound by the request rate, not the bandwidth (BENCH_ONLY=bulk). */
export const BULK_CONCURRENCY = 32;
/**
 * Objects up to this size are one request each, and the store's time to answer (not bytes, not our CPU) bounds how
 * many a second: a wider lane for them, up to where our own CPU bounds it (BENCH_ONLY=bulk, the 2,000 small objects).
 * Memory: 64 × 256 KiB at most.
 */
export const SMALL_OBJECT_BYTES = 256 * 1024;
export const SMALL_OBJECT_CONCURRENCY = 64;
/**
 * Small downloads at once: a download holds only the object's bytes (a copy holds about twice them), so twice the
 * lane in the same memory, 128 × 256 KiB at most (BULK_HELD_BYTES). Each small answer is a round trip of its own
 * (Ceph's kept connections hold every small body ~40 ms: docs/performance.md, Bulk jobs), so the wider lane is
 * wall time until the CPU binds.
 */
export const SMALL_DOWNLOAD_CONCURRENCY = 128;
/** Memory a bulk call reserves from the server's budget (parts and small files in flight). */
export const BULK_HELD_BYTES = 32 * 1024 * 1024;

export const maxObjects = z.number().int().min(1).max(BULK_OBJECTS_CAP).describe(`Default ${DEFAULT_BULK_OBJECTS}.`);

export const skipUnchanged = z.boolean().describe("Default true.");
export const dryRun = z.boolean().describe("true: only report.");
export const confirm = z.boolean().describe("Else a dry run.");
