/**
 * Transfers kept on purpose after a cut, so the next call resumes them
 * (docs/reliability.md): a multipart upload whose call was cancelled (a host
 * that gave up, the user's stop, the server stopping) or whose process died,
 * and a download's temp file with the ranges written into it. Recorded in a
 * SQLite database (bun:sqlite, WAL, a busy timeout) in the user's state
 * directory, so several server processes change records at once and none is
 * lost: a lost upload record is a multipart upload nothing aborts, storage
 * the user pays for. A record is never a secret: store endpoint, bucket,
 * key, upload id, paths. Kept for 24 h; after that the next call that sees a
 * record aborts the upload or removes the temp file.
 * The directory (state-dir.ts) decides what this server deletes and aborts,
 * so it is used only when it is this user's own; otherwise nothing is kept,
 * with one warning.
 */
import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { STATE_DATABASE, stateDirProblem } from "./state-dir.ts";

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

/** The JSON file earlier versions wrote: taken into the database once, then removed. */
const OLD_FILE = "kept-transfers.json";

const uploadId = (u: { store: string; bucket: string; key: string }) => `${u.store}\n${u.bucket}\n${u.key}`;

/** How often the running downloads' progress is written, all together (what a kill -9 loses at most). */
const NOTE_EVERY_MS = 1000;

type Database = import("bun:sqlite").Database;

/** One instance (one checked directory, one database connection) per state directory and process. */
const byDir = new Map<string, KeptTransfers>();

/**
 * The process's records in `dir`: every server and store of the process shares them (a remote server builds a
 * server per caller; each opening its own connection and checking the directory again was work done many times).
 * `warn` says, once, why nothing is kept when the directory is not the user's own.
 */
export function keptTransfersIn(dir: string | undefined, warn?: (message: string) => void): KeptTransfers {
  if (dir === undefined) return new KeptTransfers(undefined);
  let kept = byDir.get(dir);
  if (!kept) byDir.set(dir, (kept = new KeptTransfers(dir)));
  if (warn) kept.sayProblemsTo(warn);
  return kept;
}

export class KeptTransfers {
  /** Running downloads whose progress waits to be written, by target. */
  readonly #noted = new Map<string, () => KeptDownload>();
  #flush: ReturnType<typeof setTimeout> | undefined;
  #db: Database | undefined;
  /** Why nothing is kept (the directory is not this user's own, or the database would not open); undefined while all is well. */
  #problem: string | undefined;
  #warn: ((message: string) => void) | undefined;
  #warned = false;

  /** `dir` undefined: nothing is kept (a cut transfer is cleaned up, as before resume existed). Use keptTransfersIn. */
  constructor(readonly dir: string | undefined) {
    if (dir === undefined) return;
    const problem = stateDirProblem(dir);
    if (problem)
      this.#refuse(
        `the state directory ${dir} is not used (${problem}): transfers cut short are cleaned up, not kept to resume. Make it yours and 0700, or set --state-dir.`,
      );
  }

  /** Where its problem is said (once): a server's log. */
  sayProblemsTo(warn: (message: string) => void): void {
    this.#warn ??= warn;
    this.#say();
  }

  get enabled(): boolean {
    return this.dir !== undefined && this.#problem === undefined;
  }

  upload(to: { store: string; bucket: string; key: string }): KeptUpload | undefined {
    return this.#one<KeptUpload>("SELECT record FROM uploads WHERE id = ?", uploadId(to));
  }

  /** Records a kept upload; false when the state cannot be written (then nothing may be kept). */
  keepUpload(record: KeptUpload): boolean {
    return this.#run((db) =>
      db
        .query("INSERT OR REPLACE INTO uploads (id, record, created_at) VALUES (?, ?, ?)")
        .run(uploadId(record), JSON.stringify(record), record.created_at),
    );
  }

  dropUpload(to: { store: string; bucket: string; key: string }, id?: string): void {
    this.#run((db) => {
      if (id === undefined) db.query("DELETE FROM uploads WHERE id = ?").run(uploadId(to));
      else
        db.query("DELETE FROM uploads WHERE id = ? AND json_extract(record, '$.upload_id') = ?").run(uploadId(to), id);
    });
  }

  download(target: string): KeptDownload | undefined {
    return this.#one<KeptDownload>("SELECT record FROM downloads WHERE target = ?", target);
  }

  /** Records a kept download; false when the state cannot be written (then nothing may be kept). */
  keepDownload(record: KeptDownload): boolean {
    this.#noted.delete(record.target);
    return this.#run((db) => this.#putDownload(db, record));
  }

  /**
   * Notes a running download's progress (`record` read when written): the records of every running download are
   * written together, once a second, in one transaction.
   */
  noteDownload(target: string, record: () => KeptDownload): void {
    this.#noted.set(target, record);
    if (this.#flush) return;
    this.#flush = setTimeout(() => {
      this.#flush = undefined;
      const batch = [...this.#noted.values()].map((record) => record());
      this.#noted.clear();
      if (batch.length > 0)
        this.#run((db) =>
          db.transaction(() => {
            for (const b of batch) this.#putDownload(db, b);
          })(),
        );
    }, NOTE_EVERY_MS);
    this.#flush.unref?.();
  }

  dropDownload(target: string, temp?: string): void {
    // A note not yet written must not bring the record back.
    this.#noted.delete(target);
    this.#run((db) => {
      if (temp === undefined) db.query("DELETE FROM downloads WHERE target = ?").run(target);
      else db.query("DELETE FROM downloads WHERE target = ? AND temp = ?").run(target, temp);
    });
  }

  /** Records older than KEEP_MS. */
  expired(now = Date.now()): Records {
    const cutoff = now - KEEP_MS;
    return {
      uploads: this.#all<KeptUpload>("SELECT record FROM uploads WHERE created_at < ?", cutoff),
      downloads: this.#all<KeptDownload>("SELECT record FROM downloads WHERE created_at < ?", cutoff),
    };
  }

  #putDownload(db: Database, record: KeptDownload): void {
    db.query("INSERT OR REPLACE INTO downloads (target, temp, record, created_at) VALUES (?, ?, ?, ?)").run(
      record.target,
      record.temp,
      JSON.stringify(record),
      record.created_at,
    );
  }

  #refuse(message: string): void {
    this.#problem = message;
    this.#say();
  }

  #say(): void {
    if (!this.#problem || !this.#warn || this.#warned) return;
    this.#warned = true;
    this.#warn(this.#problem);
  }

  /** The database, opened (and made) on first use; undefined when nothing may be kept. */
  #open(): Database | undefined {
    if (this.#db || this.#problem !== undefined || this.dir === undefined) return this.#db;
    try {
      const { Database } = require("bun:sqlite") as typeof import("bun:sqlite");
      const db = new Database(join(this.dir, STATE_DATABASE), { create: true, strict: true });
      db.exec("PRAGMA busy_timeout = 5000");
      db.exec("PRAGMA journal_mode = WAL");
      // No fsync per change (the write-ahead log stays consistent; a power cut may cost the last records, which costs a
      // resume, as the JSON file's unsynced rewrites did): a transfer does not wait on the disk for its bookkeeping.
      db.exec("PRAGMA synchronous = NORMAL");
      db.exec(
        "CREATE TABLE IF NOT EXISTS uploads (id TEXT PRIMARY KEY, record TEXT NOT NULL, created_at INTEGER NOT NULL)",
      );
      db.exec(
        "CREATE TABLE IF NOT EXISTS downloads (target TEXT PRIMARY KEY, temp TEXT NOT NULL, record TEXT NOT NULL, created_at INTEGER NOT NULL)",
      );
      takeOldFile(db, this.dir);
      this.#db = db;
    } catch (err) {
      this.#refuse(
        `the state directory ${this.dir} cannot hold its database (${(err as Error).message}): transfers cut short are cleaned up, not kept to resume.`,
      );
    }
    return this.#db;
  }

  #run(change: (db: Database) => void): boolean {
    const db = this.#open();
    if (!db) return false;
    try {
      change(db);
      return true;
    } catch {
      // Not written (a disk full, a lock held past the timeout): resuming is lost, the transfer is not.
      return false;
    }
  }

  #one<T>(sql: string, value: string): T | undefined {
    return this.#all<T>(sql, value)[0];
  }

  #all<T>(sql: string, value: string | number): T[] {
    const db = this.#open();
    if (!db) return [];
    try {
      return (db.query(sql).all(value) as { record: string }[]).map((row) => JSON.parse(row.record) as T);
    } catch {
      return [];
    }
  }
}

/** The records an earlier version kept in a JSON file, moved into the database once. */
function takeOldFile(db: Database, dir: string): void {
  const file = join(dir, OLD_FILE);
  if (!existsSync(file)) return;
  try {
    const old = JSON.parse(readFileSync(file, "utf8")) as Partial<Records>;
    db.transaction(() => {
      for (const u of Array.isArray(old.uploads) ? old.uploads : [])
        db.query("INSERT OR IGNORE INTO uploads (id, record, created_at) VALUES (?, ?, ?)").run(
          uploadId(u),
          JSON.stringify(u),
          u.created_at,
        );
      for (const d of Array.isArray(old.downloads) ? old.downloads : [])
        db.query("INSERT OR IGNORE INTO downloads (target, temp, record, created_at) VALUES (?, ?, ?, ?)").run(
          d.target,
          d.temp,
          JSON.stringify(d),
          d.created_at,
        );
    })();
  } catch {
    // Unreadable: nothing to take in.
  }
  try {
    unlinkSync(file);
  } catch {
    // Another process took it in first.
  }
}

/** What a kept download's bytes are of: the object as its first answer showed it. */
export type DownloadIdentity = Pick<KeptDownload, "store" | "bucket" | "key" | "version_id" | "etag" | "size">;

/** A download that can be resumed: its object, and from which byte on written ranges count (the first range is always fetched again). */
export interface DownloadResume {
  identity: DownloadIdentity;
  from: number;
}
