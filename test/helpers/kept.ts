/** The transfers a server kept to resume (src/runtime/kept-transfers.ts), read from its state database as a test sees them. */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";

export interface KeptRecords {
  uploads: { store: string; bucket: string; key: string; upload_id: string; created_at: number }[];
  downloads: { target: string; temp: string; have: [number, number][]; created_at: number }[];
}

function open(state: string): Database | undefined {
  const file = join(state, "state.db");
  if (!existsSync(file)) return undefined;
  const db = new Database(file);
  // The server may be writing (or still creating the tables): wait for it as its own connections do.
  db.exec("PRAGMA busy_timeout = 5000");
  return db;
}

export function keptRecords(state: string): KeptRecords {
  const db = open(state);
  if (!db) return { uploads: [], downloads: [] };
  try {
    // A database the server is still creating has no tables yet: nothing recorded.
    const made = new Set(
      (db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name),
    );
    const rows = (table: string) =>
      made.has(table)
        ? (db.query(`SELECT record FROM ${table} ORDER BY created_at`).all() as { record: string }[]).map((r) =>
            JSON.parse(r.record),
          )
        : [];
    return { uploads: rows("uploads"), downloads: rows("downloads") };
  } finally {
    db.close();
  }
}

/** Makes every record of `table` `ms` older, as if kept that long ago. */
export function ageRecords(state: string, table: "uploads" | "downloads", ms: number): void {
  const db = open(state);
  if (!db) throw new Error(`no state database in ${state}`);
  try {
    db.query(
      `UPDATE ${table} SET created_at = created_at - ?, record = json_set(record, '$.created_at', json_extract(record, '$.created_at') - ?)`,
    ).run(ms, ms);
  } finally {
    db.close();
  }
}
