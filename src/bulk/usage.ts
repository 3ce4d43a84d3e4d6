/** Sums a listing for storage_usage: totals, groups by the next path levels, storage classes, the largest, oldest and newest. */
import type { ObjectInfo } from "../storage/index.ts";

/** Groups counted one by one; past this, the rest are summed as one "other" group (a flat prefix of millions of folders stays bounded). */
const MAX_GROUPS = 10_000;
export const OTHER_GROUP = "(other groups)";

export interface Sum {
  objects: number;
  bytes: number;
}

export class Usage {
  readonly total: Sum = { objects: 0, bytes: 0 };
  readonly groups = new Map<string, Sum>();
  readonly classes = new Map<string, Sum>();
  largest: ObjectInfo[] = [];
  oldest: ObjectInfo | undefined;
  newest: ObjectInfo | undefined;

  constructor(
    private readonly prefix: string,
    private readonly depth: number,
    private readonly top: number,
  ) {}

  add(o: ObjectInfo): void {
    add(this.total, o.size);
    add(bump(this.groups, this.groupOf(o.key)), o.size);
    add(bump(this.classes, o.storage_class ?? "STANDARD"), o.size);
    if (this.largest.length < this.top || o.size > this.largest[this.largest.length - 1]!.size) {
      this.largest.push(o);
      this.largest.sort((a, b) => b.size - a.size);
      if (this.largest.length > this.top) this.largest.pop();
    }
    if (o.last_modified) {
      if (!this.oldest || o.last_modified < this.oldest.last_modified!) this.oldest = o;
      if (!this.newest || o.last_modified > this.newest.last_modified!) this.newest = o;
    }
  }

  /** The key's first `depth` folders below the prefix ("logs/2026/"), or the prefix itself for objects directly in it. */
  groupOf(key: string): string {
    const rel = key.slice(this.prefix.length);
    let at = -1;
    for (let level = 0; level < this.depth; level++) {
      const slash = rel.indexOf("/", at + 1);
      if (slash < 0) break;
      at = slash;
    }
    const group = at < 0 ? this.prefix : this.prefix + rel.slice(0, at + 1);
    return this.groups.has(group) || this.groups.size < MAX_GROUPS ? group : OTHER_GROUP;
  }
}

function bump(map: Map<string, Sum>, name: string): Sum {
  let sum = map.get(name);
  if (!sum) map.set(name, (sum = { objects: 0, bytes: 0 }));
  return sum;
}

function add(sum: Sum, bytes: number): void {
  sum.objects++;
  sum.bytes += bytes;
}

/** The `n` largest entries of a sum map by bytes. */
export function topSums(map: Map<string, Sum>, n: number, label: string): (Sum & Record<string, string | number>)[] {
  return [...map.entries()]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, n)
    .map(([name, sum]) => ({ [label]: name, ...sum }));
}

/** 1.2 GiB, 310 MiB, 4 KiB, 12 bytes. */
export function humanBytes(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
