/**
 * At most `maxBytes` of an object from `offset`, with one ranged GET: a
 * window of get_object or search_objects, a Parquet object's footer or
 * column chunk. Pinned to `pinTo` (an ETag) when given, and then sent first
 * as a quick request (quick-range.ts), the SDK's GET answering anything
 * else.
 */
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { fetchClientFor } from "./requests/client.ts";
import { errorContext, type Operation, objectParams } from "./requests/operation.ts";
import { quickRange, quickRangeFits } from "./requests/quick-range.ts";
import { isWhole, metaOf, readAtMost } from "./transfer/bodies.ts";
import { promisesOf, verifiedBody } from "./transfer/integrity.ts";
import type { ObjectAddress, ObjectMeta } from "./types.ts";

export function readObjectRange(
  operation: Operation,
  addr: ObjectAddress,
  maxBytes: number,
  signal: AbortSignal | undefined,
  offset: number,
  pinTo: string | undefined,
): Promise<{ meta: ObjectMeta; bytes: Uint8Array }> {
  return operation(errorContext(addr), signal, async (s3, send) => {
    // A weak ETag (a proxy's) names no bytes: not pinned to.
    const etag = pinTo?.startsWith("W/") ? undefined : pinTo;
    // Bun's fetch, as a download's ranges: a window or a Parquet column chunk is object bytes too.
    const client = fetchClientFor(s3, addr.key);
    const get = (range?: string) =>
      client.send(
        new s3.sdk.GetObjectCommand({
          ...objectParams(addr),
          ...(range ? { Range: range } : {}),
          ...(etag ? { IfMatch: etag } : {}),
        }),
        send,
      );
    const pinned = etag && { ...addr, etag, offset, length: maxBytes };
    const quick =
      pinned && quickRangeFits(pinned)
        ? await quickRange(s3, pinned, send.abortSignal, send.requestTimeout)
        : undefined;
    // Part of an object: its bytes as they came, not copied again (only a whole object's have a check to pass).
    if (quick && !isWhole(quick.output)) return { meta: metaOf(quick.output), bytes: quick.bytes };
    let out: GetObjectCommandOutput | undefined = quick?.output;
    try {
      out ??= await get(`bytes=${offset}-${offset + maxBytes - 1}`);
    } catch (err) {
      // A range on an empty object is unsatisfiable (416): fetch it whole, it is empty.
      if (
        offset > 0 ||
        ((err as { name?: string }).name !== "InvalidRange" &&
          (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 416)
      )
        throw err;
      out = await get();
    }
    const ctx = errorContext(addr);
    const promises = promisesOf(out, isWhole(out));
    const bytes = await readAtMost(
      verifiedBody(out.Body as AsyncIterable<Uint8Array> | undefined, promises, ctx),
      maxBytes,
    );
    const meta = metaOf(out);
    return { meta: meta.size < 0 ? { ...meta, size: bytes.length } : meta, bytes };
  });
}
