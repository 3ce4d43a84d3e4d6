import { createHash } from "node:crypto";
import type { CompletedPart } from "@aws-sdk/client-s3";
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import { memoryPacer } from "../../runtime/memory.ts";
import { keepsOnStop } from "../../runtime/stop-reason.ts";
import { CreateAttempts } from "../orphaned-uploads.ts";
import { fetchClientFor, type S3Handle } from "../requests/client.ts";
import { countSent } from "../requests/sent-bytes.ts";
import type { UploadRequest, UploadResult } from "../types.ts";
import { etagMd5 } from "./integrity.ts";
import { isNear } from "./nearness.ts";
import { PartProgress } from "./part-progress.ts";
import { partSizeFor, queueSizeFor } from "./part-sizes.ts";
import { objectParams, putSingle } from "./single-put.ts";
import { streamPart } from "./streamed-parts.ts";
import { checkEtag, md5Of, readFully } from "./upload-bytes.ts";
import {
  abortQuietly,
  findKeptUpload,
  keptRecord,
  type ResumedUpload,
  resumable,
  type StoredPart,
  type UploadResume,
} from "./upload-resume.ts";

const MiB = 1024 * 1024;

/**
 * A full collection after this many bytes sent (memory.ts). Parts sent from
 * the file leave little garbage (Bun's fetch reads the file itself), so
 * collecting more often costs CPU for little less peak.
 */
const UPLOAD_GC_EVERY = 256 * 1024 * 1024;
/** A part sent from the file is hashed through a buffer this big. */
const HASH_CHUNK = 1024 * 1024;

/** A part slower than this (~50 MiB/s on its connection) means a far store: more parts go in flight. */
const farPart = (bytes: number, ms: number) => ms * 50 * MiB > bytes * 1000;

/**
 * Uploads a local file: one PutObject when it fits in one part, multipart
 * above that. Each concurrent part reads straight from the file at its offset
 * into one buffer reused for every part it sends, so memory is bounded by
 * queue × part size whatever the file size.
 */
export async function uploadObject(
  s3: S3Handle,
  req: UploadRequest,
  signal: AbortSignal | undefined,
  requestTimeoutMs: number,
  resume?: UploadResume,
): Promise<UploadResult> {
  const partSize = partSizeFor(req.size);
  if (req.size <= partSize) return putSingle(s3, req, signal, requestTimeoutMs);
  return putMultipart(s3, req, partSize, signal, requestTimeoutMs, resume);
}

/**
 * Whatever fails, every part in flight is stopped and settled and the
 * multipart upload aborted before this returns: nothing is left behind for
 * the store to keep (and bill). The one exception is a cut (the call
 * cancelled, the server stopping, but not cancel_job) of an upload of a known
 * source (a local file, or another store's object pinned by its ETag) with a
 * state directory: that upload is kept, recorded, and the next call for the
 * same source and destination continues it (upload-resume.ts).
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a known exception (docs/architecture.md), to be split into named steps
async function putMultipart(
  s3: S3Handle,
  req: UploadRequest,
  partSize: number,
  signal: AbortSignal | undefined,
  requestTimeoutMs: number,
  resume?: UploadResume,
): Promise<UploadResult> {
  const { client, sdk } = s3;
  const fetchClient = fetchClientFor(s3, req.key);
  // The first failure or the caller's cancel stops every other part at once.
  const stop = new AbortController();
  const onCallerAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) onCallerAbort();
  signal?.addEventListener("abort", onCallerAbort, { once: true });
  // With flexible checksums on (AWS), parts carry CRC32s that Complete must repeat.
  const checksummed = (await client.config.requestChecksumCalculation()) === "WHEN_SUPPORTED";
  const creation = new CreateAttempts();
  let keeps = resumable(req, resume) ? resume : undefined;
  let uploadId: string | undefined;
  let resumed: ResumedUpload | undefined;
  try {
    resumed = keeps ? await findKeptUpload(s3, req, keeps, partSize, stop.signal) : undefined;
    if (resumed && req.streamed) {
      // Streamed parts come from a pipe in order and cannot skip: a kept upload is continued by a copy that reads the
      // parts it lacks (cross-copy.ts); met here (another process kept it meanwhile), it is started over.
      await abortQuietly(s3, { bucket: req.bucket, key: req.key, upload_id: resumed.uploadId });
      keeps!.kept.dropUpload({ store: keeps!.store, bucket: req.bucket, key: req.key }, resumed.uploadId);
      resumed = undefined;
    }
    uploadId = resumed?.uploadId;
    if (!resumed) {
      stop.signal.throwIfAborted();
      creation.started();
      try {
        // Not cut by a cancel: a create the store has already received may still start an upload after the client
        // hangs up (a busy store does, seconds later), which nobody would know of. It is waited for (it is small; the
        // request timeout bounds it), so its upload is kept or aborted below like any other.
        const created = await client.send(
          new sdk.CreateMultipartUploadCommand({
            ...objectParams(req),
            ...(checksummed ? { ChecksumAlgorithm: "CRC32" } : {}),
          }),
        );
        creation.ended(created);
        uploadId = created.UploadId;
      } catch (err) {
        creation.ended(err, true);
        throw err;
      }
      if (stop.signal.aborted) {
        // Cut while the store started it: no part sent, nothing worth keeping.
        if (uploadId) await abortQuietly(s3, { bucket: req.bucket, key: req.key, upload_id: uploadId });
        uploadId = undefined;
        stop.signal.throwIfAborted();
      }
      // Recorded before any part goes: a process killed from here on leaves an upload the next call finds.
      // Not recorded (a state directory that cannot be written): not kept either, a cut aborts it as before.
      if (keeps && uploadId && !keeps.kept.keepUpload(keptRecord(req, keeps, uploadId, partSize))) keeps = undefined;
    }
    if (!uploadId)
      throw new ActionableError({
        resource: s3Uri(req.bucket, req.key),
        code: "NoUploadId",
        message: "The store started a multipart upload without an upload id.",
        hint: "retry; if it keeps happening the store is not S3-compatible enough for large uploads.",
      });
    const id = uploadId;

    const count = Math.ceil(req.size / partSize);
    const parts: CompletedPart[] = new Array(count);
    let next = 0;
    const progress = new PartProgress(req.onProgress);
    let firstError: unknown;
    const pace = memoryPacer(UPLOAD_GC_EVERY);
    let grow: (bytes: number, ms: number) => void = () => {};
    // Parts go out as Blobs of the file that Bun's fetch reads itself, hashed first through a small buffer;
    // parts the SDK must checksum (flexible checksums) or that node:http sends (dot-segment keys) are read whole.
    const fromFile = req.slice !== undefined && !checksummed && fetchClient === s3.fetchClient;
    // Parts of a copy between stores to a near store go as streamed bodies of the source's chunks (streamed-parts.ts).
    const streamed = req.streamed === "parts";
    const sendPart = (index: number, body: Uint8Array | Blob, md5: Buffer) =>
      fetchClient.send(
        new sdk.UploadPartCommand({
          Bucket: req.bucket,
          Key: req.key,
          UploadId: id,
          PartNumber: index + 1,
          Body: body,
          ContentLength: body instanceof Blob ? body.size : body.byteLength,
          ContentMD5: md5.toString("base64"),
          ...(checksummed ? { ChecksumAlgorithm: "CRC32" } : {}),
        }),
        { abortSignal: stop.signal },
      );
    const countStored = (index: number, stored: StoredPart, length: number) => {
      parts[index] = {
        PartNumber: index + 1,
        ETag: stored.etag,
        ...(stored.crc32 ? { ChecksumCRC32: stored.crc32 } : {}),
      };
      progress.partDone(index, length);
    };
    const worker = async () => {
      const buffer = streamed ? undefined : Buffer.allocUnsafe(fromFile ? HASH_CHUNK : partSize);
      while (next < count && !stop.signal.aborted) {
        const index = next++;
        const start = index * partSize;
        const length = Math.min(partSize, req.size - start);
        const stored = resumed?.parts.get(index + 1);
        // A kept part of a pinned source (another store's object at its ETag) counts without reading it again.
        if (stored && req.source?.trusted && stored.size === length) {
          countStored(index, stored, length);
          continue;
        }
        if (!buffer) {
          const sent = await streamPart(
            s3,
            req,
            id,
            index + 1,
            start,
            length,
            stop.signal,
            requestTimeoutMs,
            (body, md5) => sendPart(index, body, md5),
          );
          checkEtag(sent.answer, sent.md5, req, `part ${index + 1}`);
          parts[index] = { PartNumber: index + 1, ETag: sent.answer.ETag };
          progress.partDone(index, length);
          continue;
        }
        let body: Uint8Array | Blob;
        let md5: Buffer;
        let counted = false;
        if (fromFile) {
          md5 = await md5Of(req, buffer, start, length);
          // Read again when sent: if the file changed since, Content-MD5 makes the store refuse the part.
          body = req.slice!(start, start + length);
          // The first part is counted as it is sent (part-progress.ts says why only it).
          counted = index === 0 && progress.noneDone;
          if (counted) countSent(body, progress.sentOf(index));
        } else {
          body = buffer.subarray(0, length);
          await readFully(req, body, start);
          md5 = createHash("md5").update(body).digest();
        }
        stop.signal.throwIfAborted();
        // A part a cut upload already stored counts once the local bytes of that part are what its ETag says.
        if (stored && stored.size === length && etagMd5(stored.etag, {}) === md5.toString("hex")) {
          countStored(index, stored, length);
          continue;
        }
        const sentAt = performance.now();
        const out = await sendPart(index, body, md5);
        checkEtag(out, md5, req, `part ${index + 1}`);
        parts[index] = {
          PartNumber: index + 1,
          ETag: out.ETag,
          ...(out.ChecksumCRC32 ? { ChecksumCRC32: out.ChecksumCRC32 } : {}),
        };
        progress.partDone(index, length);
        pace(length);
        // A counted part's time says as much of the JS it went through as of the store: not a measure of distance.
        if (!counted) grow(length, performance.now() - sentAt);
      }
    };
    const workers: Promise<void>[] = [];
    const spawn = () => {
      const running = worker().catch((err: unknown) => {
        if (!stop.signal.aborted) {
          firstError = err;
          stop.abort(err);
        }
        throw err;
      });
      running.catch(() => {}); // settled below, in order
      workers.push(running);
    };
    // Parts that take long on their connection (a far store) let more parts go in flight. Parts read into buffers
    // hold memory, so a store that answers fast (nearness.ts) is not grown for: its slow parts are a loaded machine.
    // Asked before the first parts go: beside them the answer comes late, slowed by the very parts it is about.
    const nearStore = !fromFile && (await isNear(s3, req.bucket, stop.signal));
    grow = (bytes, ms) => {
      if (
        !nearStore &&
        farPart(bytes, ms) &&
        workers.length < Math.min(queueSizeFor(partSize, true, fromFile), count) &&
        next < count
      )
        spawn();
    };
    // Streamed parts are never timed for growth (their time is the source's as much as the store's): a far store
    // gets its parts in flight from the start.
    const initial = queueSizeFor(partSize, streamed && !nearStore, fromFile, streamed);
    for (let i = 0; i < Math.min(initial, count); i++) spawn();
    const settled: PromiseSettledResult<void>[] = [];
    // Workers may be added while earlier ones run: settle until none is left.
    for (let i = 0; i < workers.length; i++) settled.push((await Promise.allSettled([workers[i]!]))[0]!);
    const rejected = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    // The first real failure; when the caller cancelled, the parts' abort errors.
    if (rejected) throw firstError ?? rejected.reason;
    stop.signal.throwIfAborted();

    // Not cut by a cancel either: a Complete the store has received may finish after the client hangs up, and a kept
    // record would then name an upload that is gone (a cut during it left one in CI). It is one small request,
    // bounded by the request timeout; once it is sent, the object is whole.
    const done = await client.send(
      new sdk.CompleteMultipartUploadCommand({
        Bucket: req.bucket,
        Key: req.key,
        UploadId: id,
        MultipartUpload: { Parts: parts },
      }),
    );
    uploadId = undefined; // completed: nothing to abort
    keeps?.kept.dropUpload({ store: keeps.store, bucket: req.bucket, key: req.key }, id);
    if (done.ETag || !s3.quirks.completeMayOmitEtag)
      return { etag: done.ETag ?? null, version_id: done.VersionId ?? null };
    // Ceph RGW 16 answers CompleteMultipartUpload with an empty ETag (quirks.completeMayOmitEtag): ask for it.
    const head = await client.send(
      new sdk.HeadObjectCommand({
        Bucket: req.bucket,
        Key: req.key,
        ...(done.VersionId ? { VersionId: done.VersionId } : {}),
      }),
      { abortSignal: signal },
    );
    return { etag: head.ETag ?? null, version_id: done.VersionId ?? head.VersionId ?? null };
  } catch (err) {
    stop.abort(err);
    // A cut keeps a recorded upload for the next call; anything else aborts it.
    const kept = keeps && uploadId && signal?.aborted && keepsOnStop(signal.reason);
    if (uploadId && !kept) {
      await abortQuietly(s3, { bucket: req.bucket, key: req.key, upload_id: uploadId });
      keeps?.kept.dropUpload({ store: keeps.store, bucket: req.bucket, key: req.key }, uploadId);
    }
    throw err;
  } finally {
    signal?.removeEventListener("abort", onCallerAbort);
    await creation.abortOrphans(s3, req.bucket, req.key, uploadId);
  }
}
