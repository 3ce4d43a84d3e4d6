/**
 * How much one query may spill to its directory. Spill is disk the engine
 * uses past its memory limit; where the temp directory is a tmpfs (a
 * container's memory-backed volume, a Kubernetes emptyDir with medium:
 * Memory), it is memory that no cap of the worker's sees, so there the
 * default is far smaller. An operator's STORE_QUERY_SPILL_MB decides alone:
 * they know their volume.
 */
import { statfsSync } from "node:fs";
import { tmpdir } from "node:os";

const MiB = 1024 * 1024;
/** On disk: a sort or a join a few times the engine's memory limit finishes. */
export const DEFAULT_SPILL_BYTES = 1024 * MiB;
/** On a tmpfs: about the engine's own memory limit again, counted as the memory it is. */
export const TMPFS_SPILL_BYTES = 128 * MiB;
const TMPFS_MAGIC = 0x01021994;

/** The spill bound for a query: the operator's, else the default for the temp directory's kind. */
export function spillBound(configured?: number, dir = tmpdir()): number {
  if (configured) return configured;
  return isTmpfs(dir) ? TMPFS_SPILL_BYTES : DEFAULT_SPILL_BYTES;
}

function isTmpfs(dir: string): boolean {
  try {
    return Number(statfsSync(dir).type) === TMPFS_MAGIC;
  } catch {
    return false;
  }
}
