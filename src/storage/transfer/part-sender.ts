/**
 * The parts of one multipart upload (multipart-upload.ts): workers take the
 * next part, read it (a Blob of the file that Bun's fetch reads itself,
 * hashed first through a small buffer; else into a buffer each worker reuses,
 * so memory is queue × part size whatever the object's size), skip it when a
 * kept upload already holds those bytes, send it with Content-MD5 and check
 * the ETag. A far store (parts slow on their connection) gets more workers;
 * a near one does not (nearness.ts). The first failure stops every part.
 */
import { createHash } from "node:crypto";
import type { CompletedPart } from "@aws-sdk/client-s3";
import { memoryPacer } from "../../runtime/memory.ts";
import { fetchClientFor, type S3Handle } from "../requests/client.ts";
import { countSent } from "../requests/sent-bytes.ts";
import type { UploadRequest } from "../transfer-types.ts";
import { etagMd5 } from "./integrity.ts";
import { isNear } from "./nearness.ts";
import { PartProgress } from "./part-progress.ts";
import { queueSizeFor } from "./part-sizes.ts";
import { checkPartAnswer } from "./same-parts.ts";
import { streamPart } from "./streamed-parts.ts";
import { checkEtag, md5Of, readFully } from "./upload-bytes.ts";
import type { ResumedUpload, StoredPart } from "./upload-keeper.ts";

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

/** What the parts need of their upload. */
export interface PartsOf {
  s3: S3Handle;
  req: UploadRequest;
  partSize: number;
  uploadId: string;
  /** Aborted by the first failure or the caller's cancel: every part stops. */
  stop: AbortController;
  /** Flexible checksums on (AWS): parts carry CRC32s that Complete must repeat. */
  checksummed: boolean;
  /** A cut upload being continued: the parts the store holds. */
  resumed?: ResumedUpload;
  requestTimeoutMs: number;
}

export class PartSender {
  readonly #up: PartsOf;
  readonly #count: number;
  readonly #parts: CompletedPart[];
  readonly #progress: PartProgress;
  readonly #pace = memoryPacer(UPLOAD_GC_EVERY);
  readonly #fetchClient: S3Handle["fetchClient"];
  /** Parts go as Blobs of the file (not the SDK's checksummed ones, nor node:http's dot-segment keys). */
  readonly #fromFile: boolean;
  /** A copy between stores to a near store: parts are streamed bodies of the source's chunks (streamed-parts.ts). */
  readonly #streamed: boolean;
  readonly #workers: Promise<void>[] = [];
  #next = 0;
  #firstError: unknown;
  #grow: (bytes: number, ms: number) => void = () => {};

  constructor(up: PartsOf) {
    this.#up = up;
    const { req, s3, partSize } = up;
    this.#count = Math.ceil(req.size / partSize);
    this.#parts = new Array(this.#count);
    this.#progress = new PartProgress(req.onProgress);
    this.#fetchClient = fetchClientFor(s3, req.key);
    this.#fromFile = req.slice !== undefined && !up.checksummed && this.#fetchClient === s3.fetchClient;
    this.#streamed = req.streamed === "parts";
  }

  /** Sends every part; the list Complete takes, or the first failure once every part has stopped. */
  async sendAll(): Promise<CompletedPart[]> {
    const { s3, req, partSize, stop } = this.#up;
    // Parts that take long on their connection (a far store) let more parts go in flight. Parts read into buffers
    // hold memory, so a store that answers fast (nearness.ts) is not grown for: its slow parts are a loaded machine.
    // Asked before the first parts go: beside them the answer comes late, slowed by the very parts it is about.
    const nearStore = !this.#fromFile && (await isNear(s3, req.bucket, stop.signal));
    const most = Math.min(queueSizeFor(partSize, true, this.#fromFile), this.#count);
    this.#grow = (bytes, ms) => {
      if (!nearStore && farPart(bytes, ms) && this.#workers.length < most && this.#next < this.#count) this.#spawn();
    };
    // Streamed parts are never timed for growth (their time is the source's as much as the store's): a far store
    // gets its parts in flight from the start.
    const initial = queueSizeFor(partSize, this.#streamed && !nearStore, this.#fromFile, this.#streamed);
    for (let i = 0; i < Math.min(initial, this.#count); i++) this.#spawn();
    const settled: PromiseSettledResult<void>[] = [];
    // Workers may be added while earlier ones run: settle until none is left.
    for (let i = 0; i < this.#workers.length; i++) settled.push((await Promise.allSettled([this.#workers[i]!]))[0]!);
    const rejected = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    // The first real failure; when the caller cancelled, the parts' abort errors.
    if (rejected) throw this.#firstError ?? rejected.reason;
    stop.signal.throwIfAborted();
    return this.#parts;
  }

  #spawn(): void {
    const { stop } = this.#up;
    const running = this.#work().catch((err: unknown) => {
      if (!stop.signal.aborted) {
        this.#firstError = err;
        stop.abort(err);
      }
      throw err;
    });
    running.catch(() => {}); // settled in sendAll, in order
    this.#workers.push(running);
  }

  async #work(): Promise<void> {
    const buffer = this.#streamed ? undefined : Buffer.allocUnsafe(this.#fromFile ? HASH_CHUNK : this.#up.partSize);
    while (this.#next < this.#count && !this.#up.stop.signal.aborted) {
      const index = this.#next++;
      const start = index * this.#up.partSize;
      const length = Math.min(this.#up.partSize, this.#up.req.size - start);
      const stored = this.#up.resumed?.parts.get(index + 1);
      // A kept part of a pinned source (another store's object at its ETag) counts without reading it again.
      if (stored && this.#up.req.source?.trusted && stored.size === length) this.#countStored(index, stored, length);
      else if (buffer) await this.#sendRead(index, start, length, buffer, stored);
      else await this.#sendStreamed(index, start, length);
    }
  }

  /** A part read from the source (the file's Blob, or into the worker's buffer), skipped when the store holds it. */
  async #sendRead(index: number, start: number, length: number, buffer: Buffer, stored: StoredPart | undefined) {
    const { req, stop } = this.#up;
    let body: Uint8Array | Blob;
    let md5: Buffer;
    let counted = false;
    if (this.#fromFile) {
      md5 = await md5Of(req, buffer, start, length);
      // Read again when sent: if the file changed since, Content-MD5 makes the store refuse the part.
      body = req.slice!(start, start + length);
      // The first part is counted as it is sent (part-progress.ts says why only it).
      counted = index === 0 && this.#progress.noneDone;
      if (counted) countSent(body, this.#progress.sentOf(index));
    } else {
      body = buffer.subarray(0, length);
      await readFully(req, body, start);
      md5 = createHash("md5").update(body).digest();
    }
    stop.signal.throwIfAborted();
    // A part a cut upload already stored counts once the local bytes of that part are what its ETag says.
    if (stored && stored.size === length && etagMd5(stored.etag, {}) === md5.toString("hex")) {
      this.#countStored(index, stored, length);
      return;
    }
    const sentAt = performance.now();
    const out = await this.#send(index, body, md5);
    checkEtag(out, md5, req, `part ${index + 1}`);
    // An ETag that is no MD5 (an encrypted bucket) cannot compose the source's: the copy goes the checked way at once.
    if (req.sameParts) checkPartAnswer(req, out);
    this.#parts[index] = {
      PartNumber: index + 1,
      ETag: out.ETag,
      ...(out.ChecksumCRC32 ? { ChecksumCRC32: out.ChecksumCRC32 } : {}),
    };
    this.#progress.partDone(index, length);
    this.#pace(length);
    // A counted part's time says as much of the JS it went through as of the store: not a measure of distance.
    if (!counted) this.#grow(length, performance.now() - sentAt);
  }

  /** A part streamed from another store's object (streamed-parts.ts). */
  async #sendStreamed(index: number, start: number, length: number): Promise<void> {
    const { s3, req, uploadId, stop, requestTimeoutMs } = this.#up;
    const sent = await streamPart(s3, req, uploadId, index + 1, start, length, stop.signal, requestTimeoutMs, (b, m) =>
      this.#send(index, b, m),
    );
    // A part whose bytes the store checked as they came (signed chunks) has no MD5 of ours to hold its ETag to, nor
    // one of the source's parts kept (its ETag is composed with the others' before Complete: same-parts.ts).
    if (sent.md5) checkEtag(sent.answer, sent.md5, req, `part ${index + 1}`);
    else if (req.sameParts) checkPartAnswer(req, sent.answer);
    this.#parts[index] = { PartNumber: index + 1, ETag: sent.answer.ETag };
    this.#progress.partDone(index, length);
  }

  #send(index: number, body: Uint8Array | Blob, md5: Buffer) {
    const { s3, req, uploadId, stop, checksummed } = this.#up;
    return this.#fetchClient.send(
      new s3.sdk.UploadPartCommand({
        Bucket: req.bucket,
        Key: req.key,
        UploadId: uploadId,
        PartNumber: index + 1,
        Body: body,
        ContentLength: body instanceof Blob ? body.size : body.byteLength,
        ContentMD5: md5.toString("base64"),
        ...(checksummed ? { ChecksumAlgorithm: "CRC32" } : {}),
      }),
      { abortSignal: stop.signal },
    );
  }

  #countStored(index: number, stored: StoredPart, length: number): void {
    this.#parts[index] = {
      PartNumber: index + 1,
      ETag: stored.etag,
      ...(stored.crc32 ? { ChecksumCRC32: stored.crc32 } : {}),
    };
    this.#progress.partDone(index, length);
  }
}
