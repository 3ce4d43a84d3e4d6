/** A store listing as a stream of objects, one page held at a time: the source of downloads, copies, usage and searches. */
import { itemPacer } from "../memory.ts";
import type { ObjectInfo, Storage } from "../storage/index.ts";
import { stateOf, type ObjectState } from "./unchanged.ts";

const PAGE = 1000;
/** Pages between full collections (memory.ts): one page of 1,000 keys. */
const PAGES_PER_GC = 1;

/** Every object under `prefix` after `startAfter`, in key order. */
export async function* listAll(storage: Storage, bucket: string, prefix: string, signal: AbortSignal, startAfter?: string): AsyncGenerator<ObjectInfo> {
  let token: string | undefined;
  let after = startAfter;
  const pace = itemPacer(PAGES_PER_GC);
  for (;;) {
    pace();
    const page = await storage.listObjects({ bucket, prefix, maxKeys: PAGE, ...(token ? { continuationToken: token } : after ? { startAfter: after } : {}) }, signal);
    for (const object of page.objects) yield object;
    if (!page.is_truncated) return;
    token = page.next_continuation_token ?? undefined;
    if (token) continue;
    // A store that says "more" without a token: go on after the last key (and stop if that does not move).
    const last = page.objects.at(-1)?.key;
    if (last === undefined || last === after) return;
    after = last;
  }
}

/** What a destination holds under a prefix, by the path below it: compared against, and what a mirror may delete. */
export async function indexPrefix(storage: Storage, bucket: string, prefix: string, signal: AbortSignal): Promise<Map<string, ObjectState>> {
  const index = new Map<string, ObjectState>();
  for await (const object of listAll(storage, bucket, prefix, signal)) index.set(object.key.slice(prefix.length), stateOf(object));
  return index;
}

/** A folder prefix: "" stays "", anything else ends with one "/". */
export function folderPrefix(prefix: string | undefined): string {
  if (!prefix) return "";
  return prefix.endsWith("/") ? prefix : `${prefix}/`;
}
