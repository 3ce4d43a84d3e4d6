/**
 * Transfers kept on purpose after a cut, so the next call resumes them
 * (docs/reliability.md): a multipart upload whose call was cancelled (a host
 * that gave up, the user's stop, the server stopping) or whose process died,
 * and a download's temp file with the ranges written into it. Recorded in one
 * small JSON file in the user's state directory, read fresh and rewritten
 * whole (temp file + rename) on every change, so several server processes
 * share it; the last writer wins, and losing a record only costs a resume.
 * A record is never a secret: store endpoint, bucket, key, upload id, paths.
 * Kept for 24 h; after that the next call that sees a record aborts the
 * upload or removes the temp file.
 */
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

/** How long a kept transfer waits for its next call. */
export const KEEP_MS = 24 * 60 * 60 * 1000;

export interface KeptUpload {
  /** The store (its endpoint), the bucket and the key the upload goes to. */
  store: string;
  bucket: string;
  key: string;
  upload_id: string;
  /** What it reads: a local file's real path or another store's object, its size, and its version when it started (modification time, ETag). */
  source: { id: string; size: number; version: string };
  part_size: number;
  /** What else makes the object (content type, storage class, cache control, metadata), as one string. */
  params: string;
  created_at: number;
}

export interface KeptDownload {
  store: string;
  bucket: string;
  key: string;
  version_id?: string;
  /** The object the bytes are of: its ETag and size when the download started. */
  etag: string;
  size: number;
  /** Real paths: the file to write, and the hidden temp file beside it that holds what was written. */
  target: string;
  temp: string;
  /** Byte ranges [start, end) written into the temp file, sorted and apart. */
  have: [number, number][];
  created_at: number;
}

interface Records {
  uploads: KeptUpload[];
  downloads: KeptDownload[];
}

const uploadId = (u: { store: string; bucket: string; key: string }) => `${u.store}\n${u.bucket}\n${u.key}`;

/** How often the running downloads' progress is written, all together (what a kill -9 loses at most). */
const NOTE_EVERY_MS = 1000;

export class KeptTransfers {
  /** Running downloads whose progress waits to be written, by target. */
  readonly #noted = new Map<string, () => KeptDownload>();
  #flush: ReturnType<typeof setTimeout> | undefined;

  /** `dir` undefined: nothing is kept (a cut transfer is cleaned up, as before resume existed). */
  constructor(readonly dir: string | undefined) {}

  get enabled(): boolean {
    return this.dir !== undefined;
  }

  upload(to: { store: string; bucket: string; key: string }): KeptUpload | undefined {
    return this.read().uploads.find((u) => uploadId(u) === uploadId(to));
  }

  /** Records a kept upload; false when the state directory cannot be written (then nothing may be kept). */
  keepUpload(record: KeptUpload): boolean {
    return this.change((r) => ({ ...r, uploads: [...r.uploads.filter((u) => uploadId(u) !== uploadId(record)), record] }));
  }

  dropUpload(to: { store: string; bucket: string; key: string }, id?: string): void {
    this.change((r) => ({ ...r, uploads: r.uploads.filter((u) => uploadId(u) !== uploadId(to) || (id !== undefined && u.upload_id !== id)) }));
  }

  download(target: string): KeptDownload | undefined {
    return this.read().downloads.find((d) => d.target === target);
  }

  /** Records a kept download; false when the state directory cannot be written (then nothing may be kept). */
  keepDownload(record: KeptDownload): boolean {
    this.#noted.delete(record.target);
    return this.change((r) => ({ ...r, downloads: [...r.downloads.filter((d) => d.target !== record.target), record] }));
  }

  /**
   * Notes a running download's progress (`record` read when written): the records of every running download are
   * written together, once a second, not one file rewrite per download.
   */
  noteDownload(target: string, record: () => KeptDownload): void {
    this.#noted.set(target, record);
    if (this.#flush) return;
    this.#flush = setTimeout(() => {
      this.#flush = undefined;
      const batch = [...this.#noted.values()].map((record) => record());
      this.#noted.clear();
      if (batch.length > 0) this.change((r) => ({ ...r, downloads: [...r.downloads.filter((d) => !batch.some((b) => b.target === d.target)), ...batch] }));
    }, NOTE_EVERY_MS);
    this.#flush.unref?.();
  }

  dropDownload(target: string, temp?: string): void {
    // A note not yet written must not bring the record back.
    this.#noted.delete(target);
    this.change((r) => ({ ...r, downloads: r.downloads.filter((d) => d.target !== target || (temp !== undefined && d.temp !== temp)) }));
  }

  /** Records older than KEEP_MS. */
  expired(now = Date.now()): Records {
    const all = this.read();
    return { uploads: all.uploads.filter((u) => now - u.created_at > KEEP_MS), downloads: all.downloads.filter((d) => now - d.created_at > KEEP_MS) };
  }

  private get file(): string | undefined {
    return this.dir === undefined ? undefined : join(this.dir, "kept-transfers.json");
  }

  private read(): Records {
    const file = this.file;
    if (!file) return { uploads: [], downloads: [] };
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<Records>;
      return { uploads: Array.isArray(parsed.uploads) ? parsed.uploads : [], downloads: Array.isArray(parsed.downloads) ? parsed.downloads : [] };
    } catch {
      // Missing (nothing kept yet) or unreadable: nothing to resume.
      return { uploads: [], downloads: [] };
    }
  }

  private change(update: (records: Records) => Records): boolean {
    const file = this.file;
    if (!file || !this.dir) return false;
    const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(temp, JSON.stringify(update(this.read())), { mode: 0o600 });
      renameSync(temp, file);
      return true;
    } catch {
      // A state directory that cannot be written: resuming is lost (the callers then keep nothing), the transfer is not.
      try {
        unlinkSync(temp);
      } catch {
        // Never written.
      }
      return false;
    }
  }
}

/**
 * The state directory: STORE_STATE_DIR when set, else the platform's place
 * for an application's state (XDG_STATE_HOME or ~/.local/state on Linux,
 * ~/Library/Application Support on macOS, %LOCALAPPDATA% on Windows).
 * "off" keeps nothing.
 */
export function stateDirFrom(env: Record<string, string | undefined>, platform = process.platform): string | undefined {
  const given = env.STORE_STATE_DIR?.trim();
  if (given === "off") return undefined;
  if (given) return given;
  const app = "store-mcp-server";
  if (platform === "win32") return join(env.LOCALAPPDATA || join(homedir(), "AppData", "Local"), app);
  if (platform === "darwin") return join(homedir(), "Library", "Application Support", app);
  return join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), app);
}

/** Marks a stop after which nothing is kept to resume (cancel_job: the user stopped the work for good). */
export function stopForGood<E extends Error>(reason: E): E {
  return Object.assign(reason, { discardKept: true });
}

/** Whether a call stopped for `reason` keeps what it did to resume (a cut: a cancelled call, the server stopping). */
export function keepsOnStop(reason: unknown): boolean {
  return (reason as { discardKept?: boolean } | undefined)?.discardKept !== true;
}

/** What a kept download's bytes are of: the object as its first answer showed it. */
export type DownloadIdentity = Pick<KeptDownload, "store" | "bucket" | "key" | "version_id" | "etag" | "size">;

/** A download that can be resumed: its object, and from which byte on written ranges count (the first range is always fetched again). */
export interface DownloadResume {
  identity: DownloadIdentity;
  from: number;
}
