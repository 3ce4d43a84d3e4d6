/**
 * The checks a copy between stores makes besides the download's own
 * (cross-copy.ts): that bytes read again are the ones first read, that the
 * destination's refusal of a streamed PUT's MD5 is the source's fault, and
 * that nothing is at the destination when if_absent is given.
 */
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import type { CopyRequest, Storage } from "../types.ts";

/** The destination refused the streamed bytes for their MD5: they are not the bytes the source's ETag promises. */
export function notTheSource(
  err: unknown,
  req: CopyRequest,
  md5: string,
  nameSource: (err: unknown) => unknown,
): unknown {
  if (!(err instanceof ActionableError) || err.code !== "BadDigest") return err;
  return nameSource(
    new ActionableError({
      resource: s3Uri(req.source.bucket, req.source.key),
      code: "IntegrityCheckFailed",
      message: `The bytes read from the source do not have the MD5 its ETag promises (${md5}): the destination checked them and stored nothing.`,
      hint: "retry the copy; if it repeats, the source store or a proxy is corrupting data.",
      retryable: true,
    }),
  );
}

/** The source's bytes at `position` once more (a streamed part sent again), pinned to the copy's version and ETag and to the bytes first read (`sameAsFirst`: their hash). */
export async function readAgain(
  source: Storage,
  req: CopyRequest,
  first: { etag: string | null; version_id: string | null },
  into: Uint8Array,
  position: number,
  sameAsFirst: (bytes: Uint8Array) => boolean,
  signal: AbortSignal,
): Promise<void> {
  if (into.length === 0) return;
  const { meta, bytes } = await source.readObjectHead(
    { ...req.source, ...(first.version_id ? { versionId: first.version_id } : {}) },
    into.length,
    signal,
    position,
  );
  const resource = s3Uri(req.source.bucket, req.source.key);
  if (meta.etag !== first.etag)
    throw new ActionableError({
      resource,
      code: "ObjectChanged",
      message: "The source object was replaced while the copy ran; nothing was stored.",
      hint: "copy it again.",
    });
  if (bytes.length !== into.length || !sameAsFirst(bytes)) {
    throw new ActionableError({
      resource,
      code: "IntegrityCheckFailed",
      message: `Bytes ${position}-${position + into.length - 1} read from the source again (to send a part once more) are not the ones first read; nothing was stored.`,
      hint: "retry the copy; if it repeats, the source store or a proxy is corrupting data.",
      retryable: true,
    });
  }
  into.set(bytes);
}

export async function refuseIfThere(target: Storage, bucket: string, key: string, signal?: AbortSignal): Promise<void> {
  const exists = await target.headObject({ bucket, key }, signal).then(
    () => true,
    (err: unknown) => {
      if (err instanceof ActionableError && (err.code === "NoSuchKey" || err.code === "NotFound" || err.status === 404))
        return false;
      throw err;
    },
  );
  if (exists) {
    throw new ActionableError({
      resource: s3Uri(bucket, key),
      code: "PreconditionFailed",
      message: "An object already exists at the destination and if_absent was given; nothing was copied.",
      hint: "choose another object_key, or call again without if_absent to replace it.",
    });
  }
}
