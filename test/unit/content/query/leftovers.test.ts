import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { holdLock, LOCK_FILE } from "../../../../src/content/query/dir-lock.ts";
import { sweepLeftovers } from "../../../../src/content/query/leftovers.ts";

test("the sweep keeps a directory whose lock is held, whatever its pid, and removes unheld ones, half-made ones too", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "leftovers-"));
  const dead = Bun.spawnSync(["true"]).pid;
  const held = join(tmp, `store-mcp-query-${dead}-held`);
  const left = join(tmp, `store-mcp-query-${dead}-left`);
  const halfMade = join(tmp, `.store-mcp-query-new-${dead}-half`);
  for (const d of [held, left, halfMade]) mkdirSync(d);
  const release = await holdLock(join(held, LOCK_FILE));
  expect(release).toBeFunction();
  await holdLock(join(left, LOCK_FILE)).then((r) => r?.());
  expect(await sweepLeftovers(tmp)).toBe(2);
  expect([existsSync(held), existsSync(left), existsSync(halfMade)]).toEqual([true, false, false]);
  release?.();
  expect(await sweepLeftovers(tmp)).toBe(1);
});
