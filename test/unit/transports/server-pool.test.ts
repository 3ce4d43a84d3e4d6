/** The pool of MCP servers remote mode keeps between requests: by key and basis (identity), one taker each, the least recently used dropped. */
import { expect, test } from "bun:test";
import { ServerPool } from "../../../src/transports/server-pool.ts";

test("a server kept for a key and basis goes only to a request with the same key and the very same basis objects, once", () => {
  const pool = new ServerPool<string>(8);
  const policy = { rules: [] };
  const storages = {};
  pool.put("alice", [policy, storages], "s1");
  expect(pool.take("bob", [policy, storages])).toBeUndefined();
  // An equal but reloaded policy is another object: that server is dropped, not handed out.
  expect(pool.take("alice", [{ rules: [] }, storages])).toBeUndefined();
  expect(pool.size).toBe(0);
  pool.put("alice", [policy, storages], "s2");
  pool.put("alice", [policy, storages], "s3");
  const taken = [pool.take("alice", [policy, storages]), pool.take("alice", [policy, storages])];
  expect(taken.sort()).toEqual(["s2", "s3"]);
  expect(pool.take("alice", [policy, storages])).toBeUndefined();
});

test("at most maxIdle wait: the key used longest ago loses its servers first", () => {
  const pool = new ServerPool<string>(3);
  const basis = [undefined, {}];
  pool.put("a", basis, "a1");
  pool.put("b", basis, "b1");
  pool.put("a", basis, "a2");
  pool.put("c", basis, "c1");
  expect(pool.size).toBe(3);
  // "b" was used longest ago ("a" was put again after it).
  expect(pool.take("b", basis)).toBeUndefined();
  expect(pool.take("c", basis)).toBe("c1");
  expect([pool.take("a", basis), pool.take("a", basis)].sort()).toEqual(["a1", "a2"]);
});
