/**
 * Several stores in one server, in the conventions users already have:
 * - AWS profiles: `--profile NAME` (repeatable) or STORE_PROFILES=a,b (or *
 *   for every profile in the shared files); each is a store of that name with
 *   the profile's region, endpoint_url and credentials of any kind.
 * - The environment (containers, a client's env map), rclone's pattern:
 *   STORE_STORES=r2,local with STORE_R2_ENDPOINT_URL, STORE_R2_ACCESS_KEY_ID…
 * Today's single-store settings (STORE_* and the flags) are the store named
 * "default" and come first; when they give nothing and other stores are
 * configured, the first of those is the default instead.
 */

import { type AwsProfile, readAwsProfiles } from "./aws-profiles.ts";
import type { ChecksumMode, Config, StaticCredentials, StoreSettings } from "./config-types.ts";
import { readStoreEncryption, type WriteEncryption } from "./encryption-config.ts";
import { type Env, envValue, readBoolean, splitList } from "./env-values.ts";
import { connectionDefaults, readProvider } from "./store-provider.ts";

export type { StoreSettings } from "./config-types.ts";

export const DEFAULT_STORE = "default";
const STORE_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
/** The per-store variables of the environment form, after STORE_<NAME>_. */
export const STORE_VARIABLES = [
  "ENDPOINT_URL",
  "ACCESS_KEY_ID",
  "SECRET_ACCESS_KEY",
  "SESSION_TOKEN",
  "REGION",
  "FORCE_PATH_STYLE",
  "CHECKSUMS",
  "PROVIDER",
  "BUCKETS",
  "READ_ONLY",
  "ALLOW_DELETE",
  "SSE",
  "SSE_KMS_KEY_ID",
  "SSE_C_KEY",
  "SSE_C_KEY_FILE",
] as const;

/** STORE_R2_… for the store "r2" ("my-store" → STORE_MY_STORE_…). */
export function storeVariable(name: string, variable: (typeof STORE_VARIABLES)[number]): string {
  return `STORE_${name.toUpperCase().replaceAll("-", "_")}_${variable}`;
}

/** What every store shares unless it says otherwise: the server-wide flags. */
export interface StoreDefaults {
  readOnly: boolean;
  allowDelete: boolean;
  checkEndpoint(raw: string, errors: string[], label: string): string | undefined;
  checkRegion(region: string, errors: string[], label: string): void;
}

/** The named stores of the profiles and the environment form, in the order given; problems are collected, naming the store. */
export function namedStores(
  profileNames: string[],
  env: Env,
  defaults: StoreDefaults,
  errors: string[],
): StoreSettings[] {
  const stores: StoreSettings[] = [];
  const seen = new Set<string>();
  const add = (name: string, where: string, make: () => StoreSettings | undefined) => {
    if (!STORE_NAME.test(name)) {
      errors.push(
        `${where}: "${name}" is not a store name (a lowercase letter, then letters, digits, - or _; at most 32).`,
      );
      return;
    }
    if (name === DEFAULT_STORE) {
      errors.push(
        `${where}: "default" is the name of the store STORE_* and the flags configure; name this one otherwise.`,
      );
      return;
    }
    if (seen.has(name)) {
      errors.push(`${where}: the store "${name}" is configured twice.`);
      return;
    }
    seen.add(name);
    const store = make();
    if (store) stores.push(store);
  };

  if (profileNames.length > 0) {
    const profiles = readAwsProfiles(env);
    const wanted = profileNames.includes("*")
      ? [...profiles.keys()].filter((n) => STORE_NAME.test(n) && n !== DEFAULT_STORE)
      : profileNames;
    if (profileNames.includes("*") && wanted.length === 0)
      errors.push(
        "profiles: STORE_PROFILES=* but the AWS shared config files hold no usable profile (a profile named default is the default store's).",
      );
    for (const name of wanted)
      add(name, `profile ${name}`, () => profileStore(name, profiles.get(name), env, defaults, errors));
  }
  for (const name of splitList(envValue(env, "STORE_STORES"), ","))
    add(name, `STORE_STORES`, () => envStore(name, env, defaults, errors));
  return stores;
}

function profileStore(
  name: string,
  profile: AwsProfile | undefined,
  env: Env,
  defaults: StoreDefaults,
  errors: string[],
): StoreSettings | undefined {
  if (!profile) {
    errors.push(
      `store ${name}: no profile "${name}" in the AWS shared config files (${env.AWS_CONFIG_FILE || "~/.aws/config"}, ${env.AWS_SHARED_CREDENTIALS_FILE || "~/.aws/credentials"}).`,
    );
    return undefined;
  }
  const label = `store ${name} (profile ${name})`;
  const endpointUrl =
    profile.endpointUrl === undefined ? undefined : defaults.checkEndpoint(profile.endpointUrl, errors, label);
  const region = profile.region ?? "us-east-1";
  defaults.checkRegion(region, errors, label);
  return {
    name,
    credentials: undefined,
    credentialSource: `AWS profile ${name}`,
    profile: name,
    region,
    endpointUrl,
    ...connectionDefaults(endpointUrl),
    provider: readProvider(
      envValue(env, storeVariable(name, "PROVIDER")),
      endpointUrl,
      errors,
      storeVariable(name, "PROVIDER"),
    ),
    ...policyOf(name, env, defaults, errors),
  };
}

function envStore(name: string, env: Env, defaults: StoreDefaults, errors: string[]): StoreSettings {
  const v = (variable: (typeof STORE_VARIABLES)[number]) => envValue(env, storeVariable(name, variable));
  const label = `store ${name}`;
  const endpointRaw = v("ENDPOINT_URL");
  const endpointUrl =
    endpointRaw === undefined
      ? undefined
      : defaults.checkEndpoint(endpointRaw.trim(), errors, `${label}: ${storeVariable(name, "ENDPOINT_URL")}`);
  const region = v("REGION") ?? "us-east-1";
  defaults.checkRegion(region, errors, `${label}: ${storeVariable(name, "REGION")}`);
  const accessKeyId = v("ACCESS_KEY_ID");
  const secretAccessKey = v("SECRET_ACCESS_KEY");
  const sessionToken = v("SESSION_TOKEN");
  let credentials: StaticCredentials | undefined;
  if (accessKeyId && secretAccessKey)
    credentials = { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  else if (accessKeyId || secretAccessKey || sessionToken) {
    errors.push(
      `${label}: give both ${storeVariable(name, "ACCESS_KEY_ID")} and ${storeVariable(name, "SECRET_ACCESS_KEY")}, or neither (the AWS default credential chain).`,
    );
  }
  const checksumsRaw = v("CHECKSUMS")?.trim().toLowerCase();
  const connection = connectionDefaults(endpointRaw);
  let checksums: ChecksumMode = connection.checksums;
  if (checksumsRaw === "when_required") checksums = "WHEN_REQUIRED";
  else if (checksumsRaw === "when_supported") checksums = "WHEN_SUPPORTED";
  else if (checksumsRaw !== undefined)
    errors.push(
      `${label}: ${storeVariable(name, "CHECKSUMS")} "${checksumsRaw}" must be when_required or when_supported.`,
    );
  return {
    name,
    credentials,
    credentialSource: credentials
      ? `${storeVariable(name, "ACCESS_KEY_ID")} / ${storeVariable(name, "SECRET_ACCESS_KEY")}`
      : "AWS default credential chain",
    region,
    endpointUrl,
    forcePathStyle: readBoolean(env, storeVariable(name, "FORCE_PATH_STYLE"), connection.forcePathStyle, errors),
    checksums,
    provider: readProvider(v("PROVIDER"), endpointUrl, errors, storeVariable(name, "PROVIDER")),
    ...policyOf(name, env, defaults, errors),
  };
}

/** A named store's own policy: read-only if the server or the store says so; deletes and buckets as the store says, else the server. */
function policyOf(
  name: string,
  env: Env,
  defaults: StoreDefaults,
  errors: string[],
): Pick<StoreSettings, "readOnly" | "allowDelete" | "buckets" | "encryption" | "customerKey"> {
  const buckets = splitList(envValue(env, storeVariable(name, "BUCKETS")), ",");
  for (const bucket of buckets) {
    if (!/^[A-Za-z0-9._-]{1,255}$/.test(bucket))
      errors.push(`store ${name}: ${storeVariable(name, "BUCKETS")}: "${bucket}" is not a bucket name.`);
  }
  return {
    readOnly: defaults.readOnly || readBoolean(env, storeVariable(name, "READ_ONLY"), false, errors),
    ...readStoreEncryption(
      (v) => envValue(env, storeVariable(name, v)),
      (v) => storeVariable(name, v),
      errors,
    ),
    allowDelete: readBoolean(env, storeVariable(name, "ALLOW_DELETE"), defaults.allowDelete, errors),
    buckets,
  };
}

const optionalEncryption = (encryption: WriteEncryption | undefined) => (encryption ? { encryption } : {});

/** The Config a store's client is built from (and the doctor checks): the server's timeouts and limits with the store's connection and allowlist. */
export function storeConfig(config: Config, store: StoreSettings): Config {
  const { credentials, credentialSource, region, endpointUrl, forcePathStyle, checksums, provider, profile, buckets } =
    store;
  const { profile: _default, encryption: _its, customerKey: _key, ...rest } = config;
  return {
    ...rest,
    credentials,
    credentialSource,
    region,
    endpointUrl,
    forcePathStyle,
    checksums,
    provider,
    buckets,
    ...(profile ? { profile } : {}),
    ...optionalEncryption(store.encryption),
    ...(store.customerKey ? { customerKey: store.customerKey } : {}),
  };
}
