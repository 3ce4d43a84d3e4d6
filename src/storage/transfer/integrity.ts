/**
 * What a GET answer promises about its body, and a stream that holds the body
 * to it: the Content-Length always, the MD5 of a single-part ETag and the
 * store's checksum headers when they cover the whole object. A body that breaks
 * a promise is an error before anything it carried is kept.
 */

import { createHash, type Hash } from "node:crypto";
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { ActionableError, isAbortError, s3Uri } from "../../runtime/errors.ts";
import { type ErrorContext, toStorageError } from "../errors.ts";
import type { OrderedCheck } from "../types.ts";

export interface Promises {
  /** Bytes the body must have (Content-Length), when sent. */
  length: number | undefined;
  /**
   * MD5 (hex) the whole body must have: a single-part ETag of an object not encrypted with KMS or a customer key, where
   * the store sent no whole-object checksum (that one is checked instead).
   */
  md5: string | undefined;
  /** Whole-object checksums the store sent: algorithm (node:crypto name or crc32) → base64. */
  checksums: [string, string][];
}

const MD5_ETAG = /^"?([0-9a-f]{32})"?$/i;

/** The MD5 an ETag stands for, or undefined when it is not one (multipart `-N`, KMS or SSE-C encryption). */
export function etagMd5(
  etag: string | undefined | null,
  encryption?: { sse?: string; customerKey?: string },
): string | undefined {
  if (!etag || encryption?.customerKey || encryption?.sse?.startsWith("aws:kms")) return undefined;
  return MD5_ETAG.exec(etag)?.[1]?.toLowerCase();
}

/** What `out` promises; `whole` when the answer is the whole object (not a range of it). */
export function promisesOf(out: GetObjectCommandOutput, whole: boolean): Promises {
  const checksums: [string, string][] = [];
  if (whole && out.ChecksumType !== "COMPOSITE") {
    for (const [algorithm, value] of [
      ["sha256", out.ChecksumSHA256],
      ["sha1", out.ChecksumSHA1],
      ["crc32", out.ChecksumCRC32],
    ] as const) {
      if (value && !value.includes("-")) checksums.push([algorithm, value]);
    }
  }
  return {
    length: out.ContentLength,
    // A whole-object checksum the store sent is checked instead of the ETag's MD5 (a CRC costs a fraction of an MD5's CPU).
    md5:
      whole && checksums.length === 0
        ? etagMd5(out.ETag, { sse: out.ServerSideEncryption, customerKey: out.SSECustomerAlgorithm })
        : undefined,
    checksums,
  };
}

function fail(ctx: ErrorContext, code: string, message: string, hint: string, retryable = false): ActionableError {
  return new ActionableError({ resource: s3Uri(ctx.bucket ?? "", ctx.key), code, message, hint, retryable });
}

class Crc32 {
  private static table = (() => {
    const t = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      t[n] = c >>> 0;
    }
    return t;
  })();
  private crc = 0xffffffff;
  update(bytes: Uint8Array): void {
    let c = this.crc;
    for (let i = 0; i < bytes.length; i++) c = Crc32.table[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
    this.crc = c;
  }
  digestHex(): string {
    return ((this.crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, "0");
  }
}

/** A download some of whose bodies sent nothing for `ms`: the call fails whole. */
export function stoppedSending(ctx: ErrorContext, ms: number): ActionableError {
  return fail(
    ctx,
    "IncompleteBody",
    `The store stopped sending (nothing for ${ms} ms) part way through the object; nothing partial was kept.`,
    "retry the call.",
    true,
  );
}

/**
 * The promises that need the whole body in order: the MD5 of a single-part
 * ETag and whole-object checksums. `finish` throws when one was broken.
 * Undefined when there is none (a multipart ETag, no checksums): nothing to
 * feed, so no reader of the body feeds it for nothing.
 */
export function orderedCheck(
  promises: Pick<Promises, "md5" | "checksums">,
  ctx: ErrorContext,
): OrderedCheck | undefined {
  if (!promises.md5 && promises.checksums.length === 0) return undefined;
  // Made on first use: a check a reader never feeds (a copy whose destination checks the MD5, a digest computed on
  // another thread) costs no hash objects, one per small object of a bulk job.
  let hashing: { md5: Hash | undefined; hashes: [string, Hash | Crc32][] } | undefined;
  const hashers = () =>
    (hashing ??= {
      md5: promises.md5 ? createHash("md5") : undefined,
      hashes: promises.checksums.map(([alg]) => [alg, alg === "crc32" ? new Crc32() : createHash(alg)]),
    });
  const verify = (hex: Record<string, string | undefined>) => {
    // A digest missing from `hex` fails like a wrong one: nothing passes unchecked.
    if (promises.md5 && hex.md5 !== promises.md5) {
      throw fail(
        ctx,
        "IntegrityCheckFailed",
        `The body's MD5 (${hex.md5 ?? "none"}) is not the object's ETag (${promises.md5}): the data was corrupted on the way; nothing was kept.`,
        "retry the call; if it repeats, the store or a proxy is corrupting data.",
        true,
      );
    }
    for (const [alg, value] of promises.checksums) {
      const got = Buffer.from(hex[alg] ?? "", "hex").toString("base64");
      if (got !== value) {
        throw fail(
          ctx,
          "IntegrityCheckFailed",
          `The body's ${alg} (${got}) is not the checksum the store sent (${value}): the data was corrupted on the way; nothing was kept.`,
          "retry the call; if it repeats, the store or a proxy is corrupting data.",
          true,
        );
      }
    }
  };
  return {
    algorithms: [...(promises.md5 ? ["md5"] : []), ...promises.checksums.map(([alg]) => alg)],
    update(bytes) {
      const { md5, hashes } = hashers();
      md5?.update(bytes);
      for (const [, h] of hashes) h.update(bytes);
    },
    finish() {
      const { md5, hashes } = hashers();
      const hex: Record<string, string> = {};
      if (md5) hex.md5 = md5.digest("hex");
      for (const [alg, h] of hashes) hex[alg] = h instanceof Crc32 ? h.digestHex() : h.digest("hex");
      verify(hex);
    },
    verify,
  };
}

/**
 * Passes the body through, counting and checking it, and fails at the end
 * (or at the first error) when it broke a promise. A failure while reading is
 * reported as an incomplete body with the count received.
 */
export async function* verifiedBody(
  body: AsyncIterable<Uint8Array> | undefined,
  promises: Promises,
  ctx: ErrorContext,
): AsyncIterable<Uint8Array> {
  const check = orderedCheck(promises, ctx);
  let received = 0;
  try {
    if (body) {
      for await (const chunk of body) {
        received += chunk.length;
        if (promises.length !== undefined && received > promises.length) break;
        check?.update(chunk);
        yield chunk;
      }
    }
  } catch (err) {
    if (isAbortError(err) || err instanceof ActionableError) throw toStorageError(err, ctx);
    const of = promises.length !== undefined ? ` of ${promises.length}` : "";
    const timedOut =
      /timeout|timed out/i.test(String((err as Error)?.message)) || (err as Error)?.name === "TimeoutError";
    throw fail(
      ctx,
      "IncompleteBody",
      `The ${timedOut ? "store stopped sending" : "connection broke"} after ${received}${of} bytes of the object; nothing partial was kept.`,
      "retry the call.",
      true,
    );
  }
  if (promises.length !== undefined && received !== promises.length) {
    throw fail(
      ctx,
      "IncompleteBody",
      `The store promised ${promises.length} bytes but sent ${received}; nothing partial was kept.`,
      "retry the call.",
      true,
    );
  }
  check?.finish();
}
