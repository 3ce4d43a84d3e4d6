import { expect, test } from "bun:test";
import { registerSecrets, scrubSecrets } from "../../src/redact.ts";

test("registered secrets and signed-request material are scrubbed", () => {
  registerSecrets("s3cr3t-value-123", "session-token-xyz");
  const text =
    "failed: s3cr3t-value-123 and session-token-xyz at https://h/b/k?X-Amz-Credential=AKIA%2F2024&X-Amz-Signature=abcdef0123 " +
    'headers {"authorization":"AWS4-HMAC-SHA256 Credential=AKIA/x, SignedHeaders=host, Signature=deadbeef"}';
  const out = scrubSecrets(text);
  for (const leaked of ["s3cr3t-value-123", "session-token-xyz", "abcdef0123", "deadbeef", "AKIA%2F2024"]) {
    expect(out).not.toContain(leaked);
  }
  expect(out).toContain("[redacted]");
});
