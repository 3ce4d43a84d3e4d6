/**
 * The shapes `BENCH_ONLY=ab` measures (ab.ts): the single-object transfers
 * (upload, download, copies between stores whole and in parts), a query
 * after the first, and the small-object jobs, where per-object work is the
 * cost: a download of 2,000 small files and a copy of as many between stores.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { ServerSession } from "./server-session.ts";
import type { Network } from "./transfers.ts";

/** The small objects the small-object shapes read (seeded only when one of them runs). */
export const SMALL_OBJECTS = "small objects";
export const SMALL_COUNT = 2000;

export interface Shape {
  name: string;
  /** One timed run on a fresh server; `peak` is read after it. */
  run(binary: string, net: Network): Promise<Timed>;
}

/**
 * A run's time from the server's spawn to the call's result (what a client's first call costs: each build pays for
 * what it loads, at its start or at that call), and of the call alone.
 */
export interface Timed {
  ms: number;
  callMs: number;
  /** The server's CPU (user + system, every thread) during the call. */
  cpuMs: number;
  peakMb: number;
}

export interface ShapeContext {
  bucket: string;
  /** The allowed directory: f256.bin to upload, down/ to download into. */
  dir: string;
  /** Runs `call` on a fresh server of `binary` (with `extra` in its environment) and times it. */
  timed(
    binary: string,
    net: Network,
    call: (s: ServerSession) => Promise<unknown>,
    extra?: Record<string, string>,
  ): Promise<Timed>;
  /** The environment that names the same store a second time, "other": a copy from it goes through the server. */
  twoStores(net: Network): Record<string, string>;
}

export function abShapes({ bucket, dir, timed, twoStores }: ShapeContext): Shape[] {
  let smallRuns = 0;
  // A copy from the other store's name for the same Ceph: every byte through the server.
  const copyShape = (name: string, sourceKey: string, objectKey: string): Shape => ({
    name,
    run: (bin, net) =>
      timed(
        bin,
        net,
        (s) =>
          s.call("copy_object", {
            source_store: "other",
            source_bucket: bucket,
            source_key: sourceKey,
            bucket_name: bucket,
            object_key: objectKey,
          }),
        twoStores(net),
      ),
  });
  return [
    {
      name: "upload 256 MiB",
      run: (bin, net) =>
        timed(bin, net, (s) =>
          // A key of its own: over f256.bin it would leave the download and copy shapes a multipart object after it.
          s.call("upload_file", { local_file_path: "f256.bin", bucket_name: bucket, object_key: "uploaded-f256.bin" }),
        ),
    },
    {
      name: "download 256 MiB",
      run: (bin, net) => {
        rmSync(join(dir, "down", "f256.bin"), { force: true });
        return timed(bin, net, (s) =>
          s.call("get_object", {
            bucket_name: bucket,
            object_key: "f256.bin",
            mode: "download",
            local_path: "down/f256.bin",
          }),
        );
      },
    },
    copyShape("copy 256 MiB between stores", "f256.bin", "copied.bin"),
    copyShape("copy 256 MiB stored in parts between stores", "f256-parts.bin", "copied-parts.bin"),
    {
      name: "query, 12 small ones after the first",
      run: (bin, net) =>
        timed(bin, net, async (s) => {
          await s.call("query_objects", { bucket_name: bucket, keys: ["tiny.csv"], sql: "SELECT 1" });
          for (let i = 0; i < 12; i++)
            await s.call("query_objects", {
              bucket_name: bucket,
              keys: ["tiny.csv"],
              sql: "SELECT count(*) AS n, max(b) FROM objects",
            });
        }),
    },
    {
      // Into a folder of its own each run, none deleted meanwhile: ext4 skips inodes freed in the last minutes when it
      // makes a file, one by one, so creating 2,000 files right after deleting 2,000 cost several times the kernel
      // time (docs/performance.md, Bulk jobs' record, session 40). The phase's folders go at its start (ab.ts).
      name: `download 2,000 ${SMALL_OBJECTS} (download_prefix)`,
      run: (bin, net) =>
        timed(bin, net, (s) =>
          s.call("download_prefix", { bucket_name: bucket, prefix: "small/", local_dir: `down/small-${smallRuns++}` }),
        ),
    },
    {
      // Always to the same prefix, every object copied again (not skipped as unchanged): each run replaces the last
      // one's copies (the bench's Ceph holds every byte in RAM).
      name: `copy 2,000 ${SMALL_OBJECTS} between stores (copy_prefix)`,
      run: (bin, net) =>
        timed(
          bin,
          net,
          (s) =>
            s.call("copy_prefix", {
              source_store: "other",
              source_bucket: bucket,
              source_prefix: "small/",
              bucket_name: bucket,
              prefix: "copied-small/",
              skip_unchanged: false,
            }),
          twoStores(net),
        ),
    },
  ];
}
