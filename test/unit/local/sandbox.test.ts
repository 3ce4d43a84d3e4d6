/** Path checks against real directories and symlinks (no S3 involved). */
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { effectiveAllowedDirs } from "../../../src/local/allowed.ts";
import { checkExistingPath } from "../../../src/local/reading.ts";
import { checkTargetPath, isInside } from "../../../src/local/sandbox.ts";
import { ActionableError } from "../../../src/runtime/errors.ts";
import { tempDir } from "../../helpers/files.ts";

const base = tempDir("sandbox");
const allowed = join(base, "allowed");
const evil = join(base, "allowed-evil");
const outside = join(base, "outside");
for (const d of [allowed, evil, outside, join(allowed, "sub")]) mkdirSync(d, { recursive: true });
writeFileSync(join(allowed, "ok.txt"), "ok");
writeFileSync(join(evil, "secret.txt"), "no");
writeFileSync(join(outside, "secret.txt"), "no");
symlinkSync(join(outside, "secret.txt"), join(allowed, "link-out.txt"));
symlinkSync(join(allowed, "ok.txt"), join(allowed, "link-in.txt"));
symlinkSync(outside, join(allowed, "dir-out"));
symlinkSync(join(base, "nowhere"), join(allowed, "dangling"));
const dirs = { dirs: [allowed] };

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    if (err instanceof ActionableError) return err.code;
    throw err;
  }
}

for (const mode of ["fd", "path"] as const) {
  describe(`reading (upload sources), ${mode} mode`, () => {
    test.each([
      ["ok.txt", "ok"],
      [join(allowed, "ok.txt"), "ok"],
      ["link-in.txt", "ok"],
      ["sub/../ok.txt", "ok"],
      ["../../outside/secret.txt", "LocalPathNotAllowed"],
      [join(outside, "secret.txt"), "LocalPathNotAllowed"],
      [join(evil, "secret.txt"), "LocalPathNotAllowed"],
      ["link-out.txt", "LocalSymlinkRefused"],
      ["dir-out/secret.txt", "LocalSymlinkRefused"],
      ["dangling", "LocalSymlinkRefused"],
      ["ok.txt\0.png", "InvalidLocalPath"],
      ["~/.ssh/id_ed25519", "LocalPathNotAllowed"],
      ["missing.txt", "LocalFileNotFound"],
      ["", "InvalidLocalPath"],
    ])("%p → %p", async (path, expected) => {
      expect(await code(checkExistingPath(path, dirs, mode))).toBe(expected);
    });
  });

  describe(`writing (download targets), ${mode} mode`, () => {
    test.each([
      ["new.txt", "ok"],
      ["deep/new/dirs/file.txt", "ok"],
      ["ok.txt", "ok"],
      ["link-in.txt", "ok"],
      ["../../outside/new.txt", "LocalPathNotAllowed"],
      [join(evil, "new.txt"), "LocalPathNotAllowed"],
      ["link-out.txt", "LocalSymlinkRefused"],
      ["dir-out/new.txt", "LocalSymlinkRefused"],
      ["dangling", "LocalSymlinkRefused"],
      ["sub", "LocalPathIsDirectory"],
      ["a\0b", "InvalidLocalPath"],
      ["~/.bashrc", "LocalPathNotAllowed"],
    ])("%p → %p", async (path, expected) => {
      expect(await code(checkTargetPath(path, dirs, mode))).toBe(expected);
    });

    test("a new path keeps the real ancestor and reports whether the file exists", async () => {
      expect(await checkTargetPath("deep/x.txt", dirs, mode)).toEqual({
        path: join(allowed, "deep/x.txt"),
        given: "deep/x.txt",
        exists: false,
      });
      expect((await checkTargetPath("ok.txt", dirs, mode)).exists).toBe(true);
    });
  });
}

describe("allowed directories", () => {
  test("isInside is separator-safe", () => {
    expect(isInside("/data", "/data/x")).toBe(true);
    expect(isInside("/data", "/data")).toBe(true);
    expect(isInside("/data", "/data-evil/x")).toBe(false);
    expect(isInside("/data", "/data/..x")).toBe(true);
    expect(isInside("/data", "/")).toBe(false);
  });

  test("roots narrow configured dirs; only one of them → that one; neither → cwd unless / or home", () => {
    const sub = join(allowed, "sub");
    expect(effectiveAllowedDirs([allowed], [sub], "/").dirs).toEqual([sub]);
    expect(effectiveAllowedDirs([sub], [allowed], "/").dirs).toEqual([sub]);
    const excluded = effectiveAllowedDirs([allowed], [outside], "/");
    expect(excluded.dirs).toEqual([]);
    // The error says the roots exclude the allowed directory (already set) and how to add a root, not "set --allowed-dir".
    expect(excluded.problem).toContain("--allowed-dir is set");
    expect(excluded.problem).toContain("exclude it");
    expect(excluded.hint).toContain("add a root inside an allowed directory");
    expect(effectiveAllowedDirs([], [outside], "/").dirs).toEqual([outside]);
    expect(effectiveAllowedDirs([allowed], undefined, "/").dirs).toEqual([allowed]);
    expect(effectiveAllowedDirs([], undefined, allowed).dirs).toEqual([allowed]);
    expect(effectiveAllowedDirs([], undefined, "/").dirs).toEqual([]);
    expect(effectiveAllowedDirs([], undefined, homedir()).dirs).toEqual([]);
    const closed = effectiveAllowedDirs([allowed], [], "/");
    expect(closed.dirs).toEqual([]);
    expect(closed.problem).toContain("shared none");
  });

  test("with nothing allowed, the error says how to allow a directory", async () => {
    const none = effectiveAllowedDirs([], undefined, "/");
    try {
      await checkExistingPath("x", none);
      throw new Error("not refused");
    } catch (err) {
      expect((err as ActionableError).code).toBe("LocalFilesDisabled");
      expect((err as ActionableError).hint).toContain("--allowed-dir");
    }
  });
});
