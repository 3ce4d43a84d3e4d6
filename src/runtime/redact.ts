/**
 * Last line of defence against leaking credentials into logs and tool results:
 * every credential the process can learn of (command line, STORE_* and AWS_*
 * variables, and whatever the AWS default chain resolves at request time) is
 * registered, in the forms a store or a library may echo it in, and every
 * outgoing error text and log line is passed through scrubSecrets.
 */
const secrets = new Set<string>();
let ordered: string[] = [];

/** The forms a value can come back in: raw, URL-encoded (either hex case), JSON- and XML-escaped. */
function encodedForms(value: string): string[] {
  const url = encodeURIComponent(value);
  const forms = [
    value,
    url,
    url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    url.replace(/%20/g, "+"),
    JSON.stringify(value).slice(1, -1),
    value
      .replaceAll("&", "&amp;")
      .replaceAll("<", "&lt;")
      .replaceAll(">", "&gt;")
      .replaceAll('"', "&quot;")
      .replaceAll("'", "&apos;"),
  ];
  return [...new Set(forms)];
}

function add(value: string | undefined, minLength: number): void {
  if (!value || value.length < minLength || secrets.has(value)) return;
  for (const form of encodedForms(value)) secrets.add(form);
  // Longest first, so a secret that contains another is replaced whole.
  ordered = [...secrets].sort((a, b) => b.length - a.length);
}

/** Registers values that must never appear in any output (secret key, session token). */
export function registerSecrets(...values: (string | undefined)[]): void {
  for (const value of values) add(value, 4);
}

/**
 * Access key ids are not secrets on their own, but no output needs one whole
 * (logs show the last four characters). Short ids are left alone: scrubbing
 * "admin" or "test" everywhere would garble ordinary text.
 */
export function registerKeyIds(...values: (string | undefined)[]): void {
  for (const value of values) add(value, 12);
}

/** Registers every credential named on the command line or in the environment, before anything is echoed. */
export function registerStartupCredentials(argv: string[], env: Record<string, string | undefined>): void {
  const secretFlags = new Set(["--secret-access-key", "--session-token"]);
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = inline ?? argv[i + 1];
    if (secretFlags.has(flag)) registerSecrets(value);
    if (flag === "--access-key-id") registerKeyIds(value);
  }
  registerSecrets(
    env.STORE_SECRET_ACCESS_KEY,
    env.STORE_SESSION_TOKEN,
    env.AWS_SECRET_ACCESS_KEY,
    env.AWS_SESSION_TOKEN,
    env.AWS_SECURITY_TOKEN,
    env.STORE_SSE_C_KEY,
    env.STORE_CONFIRMATION_KEY,
  );
  // Remote mode's static bearer tokens (label:token, comma-separated): the whole value and each token.
  const tokens = env.STORE_HTTP_TOKENS;
  if (tokens)
    registerSecrets(
      tokens,
      ...tokens
        .split(",")
        .map((e) => e.trim().replace(/^[^:]*:/, ""))
        .filter((t) => t.length >= 8),
    );
  registerKeyIds(env.STORE_ACCESS_KEY_ID, env.AWS_ACCESS_KEY_ID);
  // The shared state store's password (redis://user:password@host), from the environment or --state-url.
  const stateUrl =
    env.STORE_STATE_URL ??
    argv
      .map((a, i) =>
        a === "--state-url" ? argv[i + 1] : a.startsWith("--state-url=") ? a.slice("--state-url=".length) : undefined,
      )
      .find((v) => v !== undefined);
  registerSecrets(...urlSecrets(stateUrl));
  // Every named store's (STORE_R2_SECRET_ACCESS_KEY…), whether or not STORE_STORES names it.
  for (const [name, value] of Object.entries(env)) {
    if (/^STORE_\w+_(SECRET_ACCESS_KEY|SESSION_TOKEN|SSE_C_KEY)$/.test(name)) registerSecrets(value);
    else if (/^STORE_\w+_ACCESS_KEY_ID$/.test(name)) registerKeyIds(value);
  }
}

/** Registers credentials resolved at request time (the AWS default chain: profiles, SSO, roles). */
export function registerResolvedCredentials(identity: {
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
}): void {
  registerSecrets(identity.secretAccessKey, identity.sessionToken);
  registerKeyIds(identity.accessKeyId);
}

// Signed-request material that SDK errors can carry in URLs or header dumps.
const SIGNATURE_PATTERNS: RegExp[] = [
  /(X-Amz-(?:Signature|Credential|Security-Token))=[^&\s"']+/gi,
  /(Signature|Credential)=[^,\s"']+/g,
  /(AWS4-HMAC-SHA256)\s+[^\n"']+/g,
  /((?:x-amz-security-token|authorization)["']?\s*[:=]\s*["']?)[^\s"',}]+/gi,
];

/** Replaces secrets, signatures and URL userinfo in a text with [redacted]. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of ordered) if (out.includes(secret)) out = out.split(secret).join("[redacted]");
  for (const pattern of SIGNATURE_PATTERNS) out = out.replace(pattern, "$1=[redacted]");
  return maskUrlUserinfo(out);
}

/**
 * userinfo in anything that looks like a URL, even one that does not parse:
 * `https://[redacted]@host`. A secret in userinfo may hold "/", "+" or "@"
 * (AWS secret keys do), so for http(s) and other network schemes everything
 * up to the last "@" of the token goes; an "@" later in a path over-masks,
 * which is the safe side. s3:// URIs name objects, whose keys may hold "@":
 * there only a `user:pass@` part before the first "/" is masked.
 */
export function maskUrlUserinfo(text: string): string {
  return text
    .replace(/\b((?!s3:)[a-z][a-z0-9+.-]*:\/\/)[^\s"'<>]*@/gi, "$1[redacted]@")
    .replace(/\b(s3:\/\/)[^/\s"'<>@]*:[^/\s"'<>]*@/gi, "$1[redacted]@");
}

/** A configured URL value as it may be echoed: userinfo masked, also in the scheme-less `user:secret@host` a user may write. */
export function maskUrlValue(raw: string): string {
  return raw.includes("://") ? maskUrlUserinfo(raw) : raw.replace(/^\S*@/, "[redacted]@");
}

/** A model- or user-supplied value for a log line: secrets scrubbed, control characters escaped, length bounded. */
export function logValue(value: string, max = 300): string {
  // Scrub before cutting: a secret across the cut would otherwise leave its head in the log.
  const scrubbed = scrubSecrets(value);
  return JSON.stringify(scrubbed.length > max ? `${scrubbed.slice(0, max)}…` : scrubbed);
}

/** The password (and a user name long enough to be one) of a URL's userinfo, decoded as a client would send them. */
function urlSecrets(raw: string | undefined): string[] {
  if (!raw) return [];
  try {
    const url = new URL(raw);
    return [decodeURIComponent(url.password), url.password].filter((s) => s.length >= 4);
  } catch {
    return [];
  }
}
