import { expect, test } from "bun:test";
import { confirmationKey } from "../../../src/transports/confirmation-key.ts";

const hex = (k: Uint8Array) => Buffer.from(k).toString("hex");

test("derived only from shared secrets: the same secrets give the same key on every replica", () => {
  const a = confirmationKey({ tokens: ["tok-one-0123456789"], storeSecretKey: "s3-secret" });
  const b = confirmationKey({ tokens: ["tok-one-0123456789"], storeSecretKey: "s3-secret" });
  expect(a.shared).toBe(true);
  expect(hex(a.key)).toBe(hex(b.key));
  expect(hex(confirmationKey({ tokens: ["another-token-0123"], storeSecretKey: "s3-secret" }).key)).not.toBe(
    hex(a.key),
  );
});

test("with no secret (OAuth and a pod role) the key is the process's own, never one an outsider can compute", () => {
  const a = confirmationKey({ tokens: [] });
  const b = confirmationKey({ tokens: [] });
  expect(a.shared).toBe(false);
  expect(hex(a.key)).not.toBe(hex(b.key));
});

test("STORE_CONFIRMATION_KEY decides alone where given", () => {
  const a = confirmationKey({ configured: "k".repeat(40), tokens: ["t1-0123456789"], storeSecretKey: "x" });
  const b = confirmationKey({ configured: "k".repeat(40), tokens: [], storeSecretKey: "y" });
  expect(a.shared).toBe(true);
  expect(hex(a.key)).toBe(hex(b.key));
});
