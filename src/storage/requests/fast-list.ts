/**
 * ListObjectsV2 through the SDK (signing, endpoint, retries, errors, the
 * response guard all as before) but with the page read by list-xml.ts: a
 * middleware of this one command takes a successful answer's body, parses it,
 * and hands the SDK's deserializer an empty result in its place. An answer
 * list-xml.ts is not sure of goes to the SDK's parser unchanged.
 */
import type { ListObjectsV2CommandInput } from "@aws-sdk/client-s3";
import { iso } from "../iso-date.ts";
import type { S3Handle } from "./client.ts";
import { MAX_RESPONSE_BYTES, tooLarge } from "./guards.ts";
import { parseListObjectsV2, type RawListPage } from "./list-xml.ts";
import type { SendOptions } from "./operation.ts";

const EMPTY_RESULT = new TextEncoder().encode("<ListBucketResult></ListBucketResult>");

type Body = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | Uint8Array | undefined;

/** The whole body, refused past `cap` bytes (whether the client's guard already capped it is the stack's business). */
async function bodyBytes(body: Body, cap: number, tooBig: () => Error): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  if (body instanceof Uint8Array) {
    if (body.byteLength > cap) throw tooBig();
    return body;
  }
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    seen += chunk.byteLength;
    if (seen > cap) {
      (body as { destroy?(): void }).destroy?.();
      throw tooBig();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** One ListObjectsV2 page, fields as the SDK would give them. */
export async function sendListObjectsV2(
  { client, sdk }: S3Handle,
  input: ListObjectsV2CommandInput,
  send: SendOptions,
): Promise<RawListPage> {
  const command = new sdk.ListObjectsV2Command(input);
  let fast: RawListPage | undefined;
  command.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const response = result.response as { statusCode?: number; body?: Body };
      if ((response?.statusCode ?? 500) >= 300) return result;
      const bytes = await bodyBytes(response.body, MAX_RESPONSE_BYTES, () =>
        tooLarge("ListObjectsV2Command", args as never, MAX_RESPONSE_BYTES),
      );
      fast = parseListObjectsV2(new TextDecoder().decode(bytes));
      // A copy each time: the SDK adopts the bytes it is given (it changes their prototype).
      response.body = fast ? EMPTY_RESULT.slice() : bytes;
      return result;
    },
    { step: "deserialize", priority: "low", name: "storeMcpFastList" },
  );
  const out = await client.send(command, send);
  if (fast) return fast;
  return {
    contents: (out.Contents ?? []).map((o) => ({
      key: o.Key ?? "",
      size: o.Size ?? 0,
      lastModified: iso(o.LastModified),
      etag: o.ETag ?? null,
      storageClass: o.StorageClass ?? null,
    })),
    commonPrefixes: (out.CommonPrefixes ?? []).map((p) => p.Prefix ?? ""),
    isTruncated: out.IsTruncated ?? false,
    nextContinuationToken: out.NextContinuationToken ?? null,
  };
}
