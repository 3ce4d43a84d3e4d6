/**
 * A bulk job's folders held across its files (held-dirs.ts): each use checks
 * the folder is still where it was reached, so one swapped mid-job for a
 * symlink, renamed away or removed is never written through.
 */
import { afterEach, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalFiles, type LocalFiles } from "../../../src/local/index.ts";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setUp() {
  const base = mkdtempSync(join(tmpdir(), "held-dirs-"));
  made.push(base);
  const root = join(base, "allowed");
  const outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  const files = createLocalFiles(async () => ({ dirs: [root] })).forStoreKeys();
  return { root, outside, files };
}

const write = (files: LocalFiles, given: string, text: string) => {
  const bytes = new TextEncoder().encode(text);
  return files.writeDownload(
    { given, path: given },
    { size: bytes.length, fill: (put) => put(0, [bytes]) },
    { overwrite: false, sha256: false },
  );
};
const openFds = () => readdirSync("/proc/self/fd").length;

test("a held folder swapped for a symlink to outside mid-job: the next file is refused, nothing lands outside", async () => {
  const { root, outside, files } = setUp();
  await write(files, `${root}/a/one.txt`, "1");
  await files.withFile(`${root}/a/one.txt`, async (state) => expect(state?.size).toBe(1));
  // The folder moves outside, and a symlink to it takes its place: the held descriptor still names the moved folder.
  renameSync(join(root, "a"), join(outside, "a-moved"));
  symlinkSync(join(outside, "a-moved"), join(root, "a"));
  await expect(write(files, `${root}/a/two.txt`, "2")).rejects.toMatchObject({ code: "UnsafeLocalPath" });
  await expect(files.withFile(`${root}/a/one.txt`, async () => "read")).rejects.toMatchObject({
    code: "UnsafeLocalPath",
  });
  expect(readdirSync(join(outside, "a-moved"))).toEqual(["one.txt"]);
  files.release();
});

test("a held folder renamed away and made again: the next file goes into the new folder, not the moved one", async () => {
  const { root, outside, files } = setUp();
  await write(files, `${root}/b/one.txt`, "1");
  renameSync(join(root, "b"), join(outside, "b-moved"));
  await write(files, `${root}/b/two.txt`, "2");
  expect(readFileSync(join(root, "b", "two.txt"), "utf8")).toBe("2");
  expect(readdirSync(join(outside, "b-moved"))).toEqual(["one.txt"]);
  // Removed outright: made again by the next write, as a fresh walk would.
  rmSync(join(root, "b"), { recursive: true });
  await write(files, `${root}/b/three.txt`, "3");
  expect(readdirSync(join(root, "b"))).toEqual(["three.txt"]);
  files.release();
});

test("folders are held across files and let go at release: no descriptor is left open", async () => {
  const { root, files } = setUp();
  const before = openFds();
  for (let i = 0; i < 40; i++) await write(files, `${root}/d${i % 4}/sub/f${i}.txt`, String(i));
  for (let i = 0; i < 40; i++)
    expect(await files.withFile(`${root}/d${i % 4}/sub/f${i}.txt`, async (s) => s?.size)).toBe(String(i).length);
  // Four folders held (each file's parent), not one walk's worth of descriptors a file.
  expect(openFds() - before).toBe(4);
  files.release();
  expect(openFds()).toBe(before);
  // Still usable after release: it walks again (and holds again until the next release).
  await write(files, `${root}/d0/sub/late.txt`, "x");
  files.release();
  expect(openFds()).toBe(before);
  expect(existsSync(join(root, "d0", "sub", "late.txt"))).toBe(true);
});

test("looks at files whose folder is not made yet hold the deepest folder there is: the next look starts there", async () => {
  const { root, files } = setUp();
  mkdirSync(join(root, "out"));
  const before = openFds();
  for (let i = 0; i < 10; i++)
    expect(await files.withFile(`${root}/out/d${i % 3}/f${i}.txt`, async (s) => s)).toBeUndefined();
  // out/ held once, not walked to from the allowed directory for every look.
  expect(openFds() - before).toBe(1);
  await write(files, `${root}/out/d1/f1.txt`, "1");
  expect(readFileSync(join(root, "out", "d1", "f1.txt"), "utf8")).toBe("1");
  files.release();
  expect(openFds()).toBe(before);
});

test("a folder held from a look at a file not made yet, swapped for a symlink to outside: the write is refused, nothing lands outside", async () => {
  const { root, outside, files } = setUp();
  mkdirSync(join(root, "out"));
  expect(await files.withFile(`${root}/out/new/f.txt`, async (s) => s)).toBeUndefined();
  renameSync(join(root, "out"), join(outside, "out-moved"));
  symlinkSync(join(outside, "out-moved"), join(root, "out"));
  await expect(write(files, `${root}/out/new/f.txt`, "x")).rejects.toMatchObject({ code: "UnsafeLocalPath" });
  expect(readdirSync(join(outside, "out-moved"))).toEqual([]);
  files.release();
});
