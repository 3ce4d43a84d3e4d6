/**
 * Last line of defence against leaking credentials into logs and tool results:
 * the configured secrets are registered once at start-up and every outgoing
 * error text is passed through scrubSecrets.
 */
const secrets = new Set<string>();

/** Registers values that must never appear in any output (secret key, session token). */
export function registerSecrets(...values: (string | undefined)[]): void {
  for (const value of values) if (value && value.length >= 4) secrets.add(value);
}

// Signed-request material that SDK errors can carry in URLs or header dumps.
const SIGNATURE_PATTERNS: RegExp[] = [
  /(X-Amz-(?:Signature|Credential|Security-Token))=[^&\s"']+/gi,
  /(Signature|Credential)=[^,\s"']+/g,
  /(AWS4-HMAC-SHA256)\s+[^\n"']+/g,
  /((?:x-amz-security-token|authorization)["']?\s*[:=]\s*["']?)[^\s"',}]+/gi,
];

/** Replaces secrets and signatures in a text with [redacted]. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join("[redacted]");
  for (const pattern of SIGNATURE_PATTERNS) out = out.replace(pattern, "$1=[redacted]");
  return out;
}
