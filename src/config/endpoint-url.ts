/** URLs as given by the user, checked: an endpoint (http(s), no credentials, no query) or any http(s) URL; echoed without userinfo. */
import { maskUrlValue } from "../runtime/redact.ts";

export function checkEndpoint(raw: string, errors: string[]): string | undefined {
  let url: URL;
  // Echoed without userinfo, even when it does not parse (user:secret@ is a credential).
  const shown = maskUrlValue(raw);
  try {
    url = new URL(raw);
  } catch {
    errors.push(
      `endpoint URL: "${shown}" is not a URL; write it like https://s3.example.com or http://127.0.0.1:9000.`,
    );
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    errors.push(`endpoint URL: "${shown}" must start with http:// or https://.`);
  }
  if (url.username || url.password) {
    // Never echo the URL: it carries a secret.
    errors.push(
      "endpoint URL: must not carry credentials (user:password@); give them as the access key id and secret access key.",
    );
  }
  if (url.search || url.hash) {
    errors.push(`endpoint URL: "${url.origin}${url.pathname}" must not have a query string or fragment.`);
  }
  return url.toString().replace(/\/$/, "");
}

/** Any http(s) URL (`what` names the setting in the error), normalised. */
export function checkUrl(raw: string, what: string, errors: string[]): string | undefined {
  try {
    const url = new URL(raw);
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString();
  } catch {
    // reported below
  }
  // Echoed without userinfo, parsed or not (user:secret@ is a credential).
  errors.push(`${what}: "${maskUrlValue(raw)}" is not an http(s) URL.`);
  return undefined;
}
