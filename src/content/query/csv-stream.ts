/**
 * A large CSV from a far store queried while it downloads: the object is
 * fetched as any is (ranges at once, into `1.part`, checked at its end), and
 * the file's written prefix is fed in order into a FIFO that the engine reads
 * as the table, so fetching and scanning overlap instead of following one
 * another (a near store's object is read whole: NEAR_HEAD_MS). The engine
 * reads a FIFO only with the dialect and columns given (it cannot sniff a
 * stream twice): it sniffs them from the object's first lines, written to a
 * head file of their own (csv-head.ts). Anything the stream cannot
 * serve (the head sniffs other than the whole would, a row later in the
 * object that does not fit the head's types) is answered by the worker with
 * STREAM_UNUSABLE, and the query runs again over the whole file once it is
 * there: same answer as before, only later. A streamed result counts only
 * once the whole object arrived and passed its checks (index.ts awaits it),
 * so a cut or a corrupt download never yields rows from a prefix.
 */
import { closeSync, constants, openSync } from "node:fs";
import { type FileHandle, open, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Storage } from "../../storage/index.ts";
import { isGzip } from "../windows.ts";
import { fileNameFor, formatOfKey, type TableFile } from "./tables.ts";
import { openWanted, type WantedObject, writeDownload } from "./workspace.ts";

/** Smaller objects arrive before a worker could use the stream: fetched whole as before. */
const STREAM_MIN_BYTES = 16 * 1024 * 1024;
/** The first lines the engine sniffs (dialect, header, types): as much as its reader's own buffer holds (tables.ts). */
const HEAD_BYTES = 4 * 1024 * 1024;
/**
 * A head that arrived this fast came from a near store (loopback, a LAN): its object arrives about as fast as the
 * engine scans it, on the same cores, and the engine's threads read a whole file faster than its one thread reads a
 * FIFO (the look bench's CSV on loopback). The HEAD probe of nearness.ts, run beside the download, judged loopback far
 * on two busy cores; awaited before it, it delayed every download. The WAN model's head takes about twice this.
 */
const NEAR_HEAD_MS = 50;
/** Read back from the file (the page cache) and written into the FIFO at a time. */
const FEED_BYTES = 1024 * 1024;

/**
 * Whether the query's objects are one CSV by name, not named gzip'd (the engine reads those only on one thread
 * anyway), and not known to be small (a key given by name has no size until its download starts).
 */
export function streamsCsv(objects: readonly WantedObject[]): boolean {
  const [object] = objects;
  return (
    process.platform !== "win32" &&
    objects.length === 1 &&
    (object!.size === 0 || object!.size >= STREAM_MIN_BYTES) &&
    formatOfKey(object!.key) === "csv" &&
    !object!.key.toLowerCase().endsWith(".gz")
  );
}

let mkfifo: ((path: string) => boolean) | undefined | null;

/** Makes a FIFO at `path` (0600); false where this platform or its C library offers none (the whole file then). */
async function makeFifo(path: string): Promise<boolean> {
  if (mkfifo === undefined) {
    try {
      const { dlopen, FFIType, ptr } = await import("bun:ffi");
      const lib = dlopen(process.platform === "darwin" ? "libSystem.B.dylib" : "libc.so.6", {
        mkfifo: { args: [FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
      });
      mkfifo = (p) => lib.symbols.mkfifo(ptr(Buffer.from(`${p}\0`)), 0o600) === 0;
    } catch {
      mkfifo = null;
    }
  }
  return mkfifo?.(path) ?? false;
}

export interface StreamedCsv {
  /**
   * The table as the engine reads it while the object downloads (`path` is the FIFO, `head` its first lines); none
   * when the object is small or its bytes are gzip'd: the whole file then.
   */
  streamed?: TableFile;
  /** The whole file once the object arrived and passed its checks (rejects as the download does). */
  whole: Promise<{ table: TableFile; bytes: number }>;
  /** Stops feeding the FIFO (an engine that never opened it or stopped reading); the download goes on. */
  release(): void;
}

/**
 * Starts fetching `object` into `dir` and resolves once its head is written, or once the download started when the
 * object is not streamed; undefined where no FIFO can be made (fetch it as any object instead). `signal` stops the
 * download.
 */
export async function streamCsv(
  storage: Storage,
  bucket: string,
  object: WantedObject,
  dir: string,
  signal: AbortSignal,
): Promise<StreamedCsv | undefined> {
  const fifo = join(dir, "1.stream.csv");
  if (!(await makeFifo(fifo))) return undefined;
  const started = performance.now();
  const download = await openWanted(storage, bucket, object, signal);
  const size = download.size ?? object.size;
  const part = join(dir, "1.part");
  const handle = await open(part, "wx+", 0o600);
  const feed = size >= STREAM_MIN_BYTES ? new Feed(handle, fifo, join(dir, "1.head.csv"), size) : undefined;
  const whole = (async () => {
    try {
      const written = await writeDownload(
        handle,
        download,
        signal,
        feed && { have: [], written: (offset, length) => feed.written(offset, length) },
      );
      await feed?.finished();
      // The stored bytes: gzip'd text is told by its magic bytes, whatever its name (as workspace.ts does).
      const first = await handle.read(Buffer.alloc(2), 0, 2, 0);
      const path = join(dir, fileNameFor(1, "csv", isGzip(first.buffer.subarray(0, first.bytesRead))));
      await rename(part, path);
      return { table: { key: object.key, path, format: "csv" as const }, bytes: written.bytes };
    } catch (err) {
      feed?.release();
      await feed?.finished().catch(() => {});
      throw err;
    } finally {
      await handle.close();
      download.discard();
    }
  })();
  whole.catch(() => {}); // awaited by the caller
  if (!feed) return { whole, release: () => {} };
  // The head first: the engine sniffs it before it opens the FIFO. A download that fails before it rejects here.
  const head = await Promise.race([feed.headWritten, whole.then(() => undefined)]);
  if (!head || isGzip(head) || performance.now() - started < NEAR_HEAD_MS) {
    feed.release();
    return { whole, release: () => {} };
  }
  return {
    streamed: { key: object.key, path: fifo, format: "csv", head: feed.headPath },
    whole,
    release: () => feed.release(),
  };
}

/** The file's written prefix, fed in order into the FIFO; the head file written once the prefix holds it. */
class Feed {
  #prefix = 0;
  #landed = new Map<number, number>();
  #fed = 0;
  #wake: (() => void) | undefined;
  #released = false;
  #writer: Promise<FileHandle> | undefined;
  #loop: Promise<void> | undefined;
  /** The head's first bytes, once it is written. */
  readonly headWritten: Promise<Uint8Array>;
  #headDone!: (first: Uint8Array) => void;

  constructor(
    private readonly file: FileHandle,
    private readonly fifo: string,
    readonly headPath: string,
    private readonly size: number,
  ) {
    this.headWritten = new Promise((resolve) => (this.#headDone = resolve));
  }

  written(offset: number, length: number): void {
    this.#landed.set(offset, offset + length);
    for (let to = this.#landed.get(this.#prefix); to !== undefined; to = this.#landed.get(this.#prefix)) {
      this.#landed.delete(this.#prefix);
      this.#prefix = to;
    }
    this.#start();
    this.#wake?.();
  }

  /** Settles once everything written has been fed (or feeding stopped). */
  finished(): Promise<void> {
    this.#start();
    this.#wake?.();
    return this.#loop!;
  }

  #start(): void {
    if (this.#loop) return;
    this.#loop = this.#run();
    this.#loop.catch(() => {}); // finished() hands it on
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#wake?.();
    // A writer still waiting for a reader (the engine never opened the FIFO) is let through by a reader of ours, held
    // until that open is done (#run then writes nothing): opened and closed at once, it could come before the open.
    let reader: number | undefined;
    try {
      reader = openSync(this.fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {}
    const close = () => reader !== undefined && closeSync(reader);
    if (this.#writer) this.#writer.then(close, close);
    else close();
  }

  async #run(): Promise<void> {
    await this.#until(() => this.#prefix >= Math.min(this.size, HEAD_BYTES));
    await this.#writeHead();
    if (this.#released) return;
    this.#writer = open(this.fifo, "w");
    const out = await this.#writer;
    const buffer = Buffer.allocUnsafe(FEED_BYTES);
    try {
      while (this.#fed < this.size && !this.#released) {
        await this.#until(() => this.#prefix > this.#fed);
        if (this.#released) break;
        const { bytesRead } = await this.file.read(
          buffer,
          0,
          Math.min(FEED_BYTES, this.#prefix - this.#fed),
          this.#fed,
        );
        if (bytesRead === 0) break;
        await out.write(buffer, 0, bytesRead);
        this.#fed += bytesRead;
      }
    } catch {
      // EPIPE: the engine stopped reading (a LIMIT met, an error, its worker ended). The download goes on to its end.
    } finally {
      await out.close().catch(() => {});
    }
  }

  /** Resolves when `ready()` holds, or feeding was released. */
  async #until(ready: () => boolean): Promise<void> {
    while (!ready() && !this.#released) await new Promise<void>((resolve) => (this.#wake = resolve));
  }

  /** The head: whole lines of the first HEAD_BYTES (the whole object when smaller). */
  async #writeHead(): Promise<void> {
    const length = Math.min(this.size, HEAD_BYTES, this.#prefix);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await this.file.read(buffer, 0, length, 0);
    const head = buffer.subarray(0, bytesRead);
    const end = bytesRead < this.size ? head.lastIndexOf(0x0a) + 1 : bytesRead;
    await writeFile(this.headPath, head.subarray(0, end), { mode: 0o600 });
    this.#headDone(head.subarray(0, 2));
  }
}
