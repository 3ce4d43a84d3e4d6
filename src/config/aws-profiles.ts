/**
 * The profiles of the AWS shared config files (`~/.aws/config` and
 * `~/.aws/credentials`, or AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE),
 * read once at start-up for what a store needs to know before its first
 * request: which profiles exist, and each one's region and endpoint_url
 * (directly, or in the `services` section it names, as the AWS SDKs read
 * them). Credentials are not read here: the SDK resolves them from the
 * profile on first use (static keys, SSO, assume-role, credential_process).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Env } from "./env-values.ts";

export interface AwsProfile {
  region?: string;
  endpointUrl?: string;
}

type Sections = Map<string, Map<string, string>>;

/** An INI file as sections of keys; an indented `key = value` under `s3 =` becomes `s3.key`. */
export function parseIni(text: string): Sections {
  const sections: Sections = new Map();
  let section: Map<string, string> | undefined;
  let sub: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)[;#].*$/, "").trim();
    if (line === "") continue;
    if (line.startsWith("[") && line.endsWith("]")) {
      const name = line.slice(1, -1).trim().replace(/\s+/g, " ");
      section = sections.get(name) ?? new Map();
      sections.set(name, section);
      sub = undefined;
      continue;
    }
    const eq = line.indexOf("=");
    if (!section || eq <= 0) continue;
    const key = line.slice(0, eq).trim().toLowerCase();
    const value = line.slice(eq + 1).trim();
    const indented = raw.length > raw.trimStart().length;
    if (value === "") {
      sub = key;
      continue;
    }
    if (!indented) sub = undefined;
    section.set(sub ? `${sub}.${key}` : key, value);
  }
  return sections;
}

function readSections(path: string): Sections {
  try {
    return parseIni(readFileSync(path, "utf8"));
  } catch {
    return new Map(); // a file that is not there has no profiles
  }
}

const expandHome = (p: string) => (p.startsWith("~/") ? join(homedir(), p.slice(2)) : p);

/** Every profile of the shared files, by name, with the settings a store needs. */
export function readAwsProfiles(env: Env): Map<string, AwsProfile> {
  const config = readSections(expandHome(env.AWS_CONFIG_FILE || join(homedir(), ".aws", "config")));
  const credentials = readSections(
    expandHome(env.AWS_SHARED_CREDENTIALS_FILE || join(homedir(), ".aws", "credentials")),
  );
  const profiles = new Map<string, AwsProfile>();
  for (const [section, values] of config) {
    const name =
      section === "default" ? "default" : section.startsWith("profile ") ? section.slice(8).trim() : undefined;
    if (!name) continue;
    const services = values.get("services");
    const endpointUrl =
      (services && config.get(`services ${services}`)?.get("s3.endpoint_url")) || values.get("endpoint_url");
    profiles.set(name, {
      ...(values.get("region") ? { region: values.get("region") } : {}),
      ...(endpointUrl ? { endpointUrl } : {}),
    });
  }
  for (const name of credentials.keys()) if (!profiles.has(name)) profiles.set(name, {});
  return profiles;
}
