import { describe, expect, test } from "bun:test";
import { CallerAccess } from "../../../src/access/caller-access.ts";
import { guardedStorage } from "../../../src/access/guarded-storage.ts";
import { parsePolicy } from "../../../src/access/policy-file.ts";
import type { Storage } from "../../../src/storage/index.ts";
import { ALL_TOOLS } from "../../../src/tool-registry/index.ts";

const names = {
  tools: ALL_TOOLS.map((t) => t.name),
  groups: ["read", "write", "delete", "admin"],
  stores: ["default", "r2"],
};
const tool = (name: string) => ALL_TOOLS.find((t) => t.name === name)!;

function accessFor(
  yaml: string,
  who: { id: string; label?: string; sub?: string; claims?: Record<string, unknown>; tokenScopes?: string[] },
) {
  const parsed = parsePolicy(yaml, names);
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  return new CallerAccess(parsed.policy, who);
}

const POLICY = `
groups_claim: realm_access.roles
rules:
  - who: ["group:dev"]
    access: read
    stores: [r2]
    buckets: ["logs-*"]
    prefixes: ["app/"]
    tools: ["*"]
  - who: ["scope:s3:admin"]
    access: delete
    stores: ["*"]
    buckets: ["*"]
    prefixes: [""]
    tools: ["*"]
`;

describe("who a rule names", () => {
  test("a group under a dotted claim, a token scope; nobody else", () => {
    const dev = accessFor(POLICY, { id: "ann", sub: "ann", claims: { realm_access: { roles: ["dev"] } } });
    expect(dev.offers(tool("get_object"))).toBe(true);
    expect(dev.offers(tool("put_object"))).toBe(false);
    expect(accessFor(POLICY, { id: "x", tokenScopes: ["s3:admin"] }).offers(tool("delete_bucket"))).toBe(true);
    expect(
      accessFor(POLICY, { id: "y", claims: { realm_access: { roles: ["devs"] } } }).offers(tool("list_buckets")),
    ).toBe(false);
  });
});

describe("what a grant covers", () => {
  const dev = accessFor(POLICY, { id: "ann", claims: { realm_access: { roles: ["dev"] } } });
  const grants = dev.forCall(tool("list_objects"), {})!;
  test("store, bucket glob, prefix and level", () => {
    expect(grants.allows("read", "r2", "logs-2026", "app/x.log")).toBe(true);
    expect(grants.allows("read", "default", "logs-2026", "app/x.log")).toBe(false);
    expect(grants.allows("read", "r2", "other", "app/x.log")).toBe(false);
    expect(grants.allows("read", "r2", "logs-2026", "appx/y")).toBe(false);
    expect(grants.allows("write", "r2", "logs-2026", "app/x.log")).toBe(false);
    // The whole bucket ("") is not a prefix grant's.
    expect(grants.allows("read", "r2", "logs-2026", "")).toBe(false);
  });
  test("a listing: inside the grant all, above it only the granted prefixes, beside it nothing", () => {
    expect(grants.view("r2", "logs-1", "app/2026/")).toEqual({ all: true });
    expect(grants.view("r2", "logs-1", "")).toEqual({ all: false, prefixes: ["app/"] });
    expect(grants.view("r2", "logs-1", "ap")).toEqual({ all: false, prefixes: ["app/"] });
    expect(grants.view("r2", "logs-1", "web/")).toEqual({ all: false, prefixes: [] });
  });
  test("a key with a dot segment is refused even inside the prefix", async () => {
    const storage = { headObject: async () => ({}) } as unknown as Storage;
    const guarded = guardedStorage(storage, grants, "r2");
    await expect(guarded.headObject({ bucket: "logs-1", key: "app/../secret" })).rejects.toMatchObject({
      code: "UnsafeKey",
    });
    await expect(guarded.headObject({ bucket: "logs-1", key: "web/x" })).rejects.toMatchObject({
      code: "PolicyDenied",
    });
    await expect(guarded.headObject({ bucket: "logs-1", key: "app/x" })).resolves.toBeDefined();
  });
});

test("problems with the file are listed, naming rule and field", () => {
  const bad = parsePolicy(
    "rules:\n  - who: [nobody]\n    access: root\n  - who: ['*']\n    access: read\n    tools: [fly]\n",
    names,
  );
  expect(bad.ok).toBe(false);
  if (!bad.ok) expect(bad.errors.join("\n")).toMatch(/rules\.0\.who\.0[\s\S]*rules\.0\.access/);
  expect(parsePolicy("{ not yaml", names).ok).toBe(false);
});

test("a rule cut short fails instead of widening: buckets, prefixes, tools (and stores, with several) are written out", () => {
  const cut = parsePolicy("rules:\n  - who: ['sub:dave']\n    access: read\n    buckets: [reports]\n", names);
  expect(cut.ok).toBe(false);
  if (!cut.ok) {
    expect(cut.errors.join("\n")).toContain('rules.0.prefixes: write the prefixes out: [""] for every key');
    expect(cut.errors.join("\n")).toContain('rules.0.tools: write the tools out: ["*"]');
  }
  const noStores = parsePolicy(
    "rules:\n  - who: ['*']\n    access: read\n    buckets: ['*']\n    prefixes: ['']\n    tools: ['*']\n",
    names,
  );
  expect(noStores.ok).toBe(false);
  if (!noStores.ok) expect(noStores.errors.join("\n")).toContain("stores: write the stores out");
  const oneStore = parsePolicy(
    "rules:\n  - who: ['*']\n    access: read\n    buckets: ['*']\n    prefixes: ['']\n    tools: ['*']\n",
    { ...names, stores: ["default"] },
  );
  expect(oneStore.ok).toBe(true);
  if (oneStore.ok)
    expect(oneStore.policy.rules[0]).toMatchObject({ stores: ["*"], buckets: ["*"], prefixes: [""], tools: undefined });
});

test("a lifecycle change that expires objects needs a delete rule, as a delete does; one that only aborts uploads, write", async () => {
  const policy = `rules:\n  - who: ["sub:ops"]\n    access: write\n    stores: ["*"]\n    buckets: ["*"]\n    prefixes: [""]\n    tools: ["*"]\n`;
  const ops = accessFor(policy, { id: "ops", sub: "ops" });
  const lifecycle = tool("set_bucket_lifecycle");
  expect(ops.forCall(lifecycle, { bucket_name: "b", rules: [{ id: "x", expire_after_days: 1 }] })).toBeUndefined();
  expect(ops.forCall(lifecycle, { bucket_name: "b", rules: [], replace: true })).toBeUndefined();
  const grants = ops.forCall(lifecycle, {
    bucket_name: "b",
    rules: [{ id: "x", abort_incomplete_uploads_after_days: 1 }],
  })!;
  expect(grants).toBeDefined();
  const storage = { setBucketLifecycle: async () => {} } as unknown as Storage;
  const guarded = guardedStorage(storage, grants, "default");
  await expect(guarded.setBucketLifecycle("b", { keep: [], set: [], deletes: true })).rejects.toMatchObject({
    code: "PolicyDenied",
  });
  await expect(guarded.setBucketLifecycle("b", { keep: [], set: [] })).resolves.toBeUndefined();
  const { missingScope } = await import("../../../src/access/policy.ts");
  expect(
    missingScope(
      ALL_TOOLS,
      "set_bucket_lifecycle",
      { bucket_name: "b", rules: [{ id: "x", noncurrent_expire_after_days: 1 }] },
      new Set(["read", "write"]),
    ),
  ).toBe("delete");
});

test("object lock: a write rule sets retention and legal hold; lifting a GOVERNANCE retention early (the bypass) needs a delete rule", async () => {
  const policy = `rules:\n  - who: ["sub:ops"]\n    access: write\n    stores: ["*"]\n    buckets: ["*"]\n    prefixes: [""]\n    tools: ["admin"]\n`;
  const ops = accessFor(policy, { id: "ops", sub: "ops" });
  const lock = tool("set_object_lock");
  expect(ops.offers(lock)).toBe(true);
  expect(ops.offers(tool("restore_object"))).toBe(true);
  expect(
    ops.forCall(lock, { bucket_name: "b", object_key: "k", mode: "NONE", bypass_governance: true }),
  ).toBeUndefined();
  const grants = ops.forCall(lock, { bucket_name: "b", object_key: "k", legal_hold: "ON" })!;
  const sent: string[] = [];
  const storage = {
    setObjectRetention: async () => void sent.push("retention"),
    setObjectLegalHold: async () => void sent.push("hold"),
  } as unknown as Storage;
  const guarded = guardedStorage(storage, grants, "default");
  await expect(guarded.setObjectRetention({ bucket: "b", key: "k" }, null, true)).rejects.toMatchObject({
    code: "PolicyDenied",
  });
  await guarded.setObjectLegalHold({ bucket: "b", key: "k" }, "ON");
  expect(sent).toEqual(["hold"]);
  // Lifting a hold lets the object be deleted: a write-level rule does not reach it.
  await expect(guarded.setObjectLegalHold({ bucket: "b", key: "k" }, "OFF")).rejects.toMatchObject({
    code: "PolicyDenied",
  });
  expect(sent).toEqual(["hold"]);
  const { missingScope } = await import("../../../src/access/policy.ts");
  expect(
    missingScope(
      ALL_TOOLS,
      "set_object_lock",
      { bucket_name: "b", object_key: "k", bypass_governance: true },
      new Set(["read", "write"]),
    ),
  ).toBe("delete");
  expect(
    missingScope(
      ALL_TOOLS,
      "set_object_lock",
      { bucket_name: "b", object_key: "k", legal_hold: "OFF" },
      new Set(["read", "write"]),
    ),
  ).toBe("delete");
  // A rule over some prefixes of the bucket does not grant the admin tools, which are about whole buckets.
  const narrow = accessFor(policy.replace('prefixes: [""]', 'prefixes: ["a/"]'), { id: "ops", sub: "ops" });
  expect(narrow.offers(lock)).toBe(false);
});
