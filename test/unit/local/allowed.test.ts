/** Allowed directories an operator may not give. */
import { expect, test } from "bun:test";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { tooBroad } from "../../../src/local/allowed.ts";

test("too broad: /, home and its ancestors, system dirs and credential folders; project folders pass", () => {
  const home = homedir();
  for (const dir of [
    "/",
    home,
    dirname(home),
    "/etc",
    "/etc/ssl",
    "/usr",
    "/proc/self",
    join(home, ".ssh"),
    "C:\\",
    "C:\\Windows\\System32",
  ]) {
    expect(tooBroad(dir, home)).toBeDefined();
  }
  for (const dir of [join(home, "projects"), "/usr/src/app", "/var/lib/data", "/tmp/work", "/srv/data"])
    expect(tooBroad(dir, home)).toBeUndefined();
});
