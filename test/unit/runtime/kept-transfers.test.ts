/**
 * The kept-transfer records (src/runtime/kept-transfers.ts) in SQLite: four
 * processes changing records at once lose none; a state directory that is
 * not this user's own (group-writable, a symlink) keeps nothing, with one
 * warning; records an earlier version wrote as JSON are taken in once.
 */
import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { KeptTransfers, type KeptUpload, keptTransfersIn } from "../../../src/runtime/kept-transfers.ts";
import { tempDir } from "../../helpers/files.ts";

const MODULE = resolve(import.meta.dir, "../../../src/runtime/kept-transfers.ts");
// Removed when the run ends (helpers/files.ts), as every test's temp directory is.
const fresh = () => tempDir("kept-unit");
const uploadOf = (key: string, created_at = Date.now()): KeptUpload => ({
  store: "s",
  bucket: "b",
  key,
  upload_id: `id-${key}`,
  source: { id: key, size: 1, version: "1" },
  part_size: 8,
  params: "",
  created_at,
});

test("four processes keeping and dropping records at once lose none", async () => {
  const dir = join(fresh(), "state");
  const script = (n: number) => `
    const { KeptTransfers } = await import(${JSON.stringify(MODULE)});
    const kept = new KeptTransfers(${JSON.stringify(dir)});
    for (let i = 0; i < 60; i++) {
      const key = "p${n}-" + i;
      if (!kept.keepUpload({ store: "s", bucket: "b", key, upload_id: "id-" + key, source: { id: key, size: 1, version: "1" }, part_size: 8, params: "", created_at: Date.now() })) throw new Error("not kept");
      kept.keepDownload({ store: "s", bucket: "b", key, etag: "e", size: 1, target: "/t/" + key, temp: "/t/." + key, have: [], created_at: Date.now() });
      if (i % 3 === 0) kept.dropUpload({ store: "s", bucket: "b", key });
    }
  `;
  const procs = [0, 1, 2, 3].map((n) =>
    Bun.spawn([process.execPath, "-e", script(n)], { stdout: "ignore", stderr: "pipe" }),
  );
  const codes = await Promise.all(procs.map((p) => p.exited));
  expect(codes).toEqual([0, 0, 0, 0]);
  const kept = new KeptTransfers(dir);
  const all = kept.expired(Date.now() + 48 * 3600 * 1000);
  // 60 each, a third dropped again: 40 uploads and 60 downloads from each of the four.
  expect(all.uploads.length).toBe(160);
  expect(all.downloads.length).toBe(240);
  for (let n = 0; n < 4; n++)
    expect(kept.upload({ store: "s", bucket: "b", key: `p${n}-1` })?.upload_id).toBe(`id-p${n}-1`);
}, 30_000);

test("a state directory others can write to, or a symlink, keeps nothing and says so once", () => {
  const root = fresh();
  const open = join(root, "open");
  mkdirSync(open);
  chmodSync(open, 0o777);
  const warnings: string[] = [];
  // The process's one instance for the directory: a second server gets the same, and the warning is said once.
  const kept = keptTransfersIn(open, (m) => warnings.push(m));
  expect(kept.enabled).toBe(false);
  expect(kept.keepUpload(uploadOf("a"))).toBe(false);
  expect(existsSync(join(open, "state.db"))).toBe(false);
  expect(keptTransfersIn(open, (m) => warnings.push(m))).toBe(kept);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain("others can write to it");
  const real = join(root, "real");
  mkdirSync(real, { mode: 0o700 });
  const link = join(root, "link");
  symlinkSync(real, link);
  const linked = keptTransfersIn(link, (m) => warnings.push(m));
  expect(linked.enabled).toBe(false);
  expect(warnings[1]).toContain("symlink");
  // This user's own, 0700: kept.
  const own = new KeptTransfers(real);
  expect(own.keepUpload(uploadOf("b"))).toBe(true);
  expect(own.upload({ store: "s", bucket: "b", key: "b" })?.upload_id).toBe("id-b");
});

test("records an earlier version kept in kept-transfers.json are taken in once", () => {
  const dir = join(fresh(), "state");
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, "kept-transfers.json"), JSON.stringify({ uploads: [uploadOf("old", 1)], downloads: [] }));
  const kept = new KeptTransfers(dir);
  expect(kept.upload({ store: "s", bucket: "b", key: "old" })?.upload_id).toBe("id-old");
  expect(kept.expired().uploads.map((u) => u.key)).toEqual(["old"]);
  expect(existsSync(join(dir, "kept-transfers.json"))).toBe(false);
});
