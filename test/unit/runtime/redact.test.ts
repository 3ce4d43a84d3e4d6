import { describe, expect, test } from "bun:test";
import { logValue, maskUrlUserinfo, registerSecrets, scrubSecrets } from "../../../src/runtime/redact.ts";

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

test("URL userinfo is masked whole, parsed or not, even with '/', '+' or '@' in the secret; s3:// keys with '@' are left alone", () => {
  const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfi@CYEXAMPLEKEY";
  for (const text of [
    `http://AKID:${secret}@host:99999`,
    `endpoint "https://AKID:${secret}@host/p" is not a URL`,
    `ftp://u:${secret}@h`,
  ]) {
    const masked = maskUrlUserinfo(text);
    for (const part of secret.split(/[/@]/)) expect(masked).not.toContain(part);
    expect(masked).toContain("[redacted]@");
  }
  expect(scrubSecrets("s3://bucket/people/ann@example.com/cv.pdf: NoSuchKey")).toBe(
    "s3://bucket/people/ann@example.com/cv.pdf: NoSuchKey",
  );
  expect(scrubSecrets("s3://user:pass@bucket/k")).toBe("s3://[redacted]@bucket/k");
  expect(scrubSecrets("no URL here: a@b")).toBe("no URL here: a@b");
});

describe("secrets", () => {
  test("a secret across the log cut is scrubbed whole, not left with its head", () => {
    const secret = "S3cretValueForTheCut-0123456789";
    registerSecrets(secret);
    const logged = logValue(`${"k".repeat(290)}${secret}`);
    expect(logged).not.toContain(secret.slice(0, 10));
    expect(logValue("line\nforged")).toBe('"line\\nforged"');
  });

  test("encoded forms are scrubbed; userinfo is masked even in what does not parse", () => {
    const token = "tok/en+with=special";
    registerSecrets(token);
    const encoded = encodeURIComponent(token);
    for (const form of [
      encoded,
      encoded.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      JSON.stringify(token).slice(1, -1),
    ]) {
      expect(scrubSecrets(`echo ${form} echo`)).not.toContain(form);
    }
    expect(maskUrlUserinfo("http://user:p@ss@exa mple.com/x")).toBe("http://[redacted]@exa mple.com/x");
  });
});
