/**
 * The stores' settings: the single-store options and STORE_* variables
 * (the store "default": credentials, region, endpoint, connection, provider,
 * encryption), then the named stores (stores-config.ts), the first of which
 * is the default when the single-store settings say nothing.
 */
import type { ChecksumMode, CliOptions, StaticCredentials, StoreSettings } from "./config-types.ts";
import { readStoreEncryption } from "./encryption-config.ts";
import { checkEndpoint } from "./endpoint-url.ts";
import { type Env, envValue, readBoolean, splitList } from "./env-values.ts";
import { isLoopback } from "./http-config.ts";
import { connectionDefaults, readProvider } from "./store-provider.ts";
import { DEFAULT_STORE, namedStores } from "./stores-config.ts";

const DEFAULT_REGION = "us-east-1";

function firstGiven(...values: (string | undefined)[]): string | undefined {
  return values.find((v) => v !== undefined && v.trim() !== "");
}

/**
 * The stores: the single-store settings make the store "default", then the
 * named ones (STORE_PROFILES); when the single-store settings say nothing,
 * the first named store is the default.
 */
export function readStores(
  cli: CliOptions,
  env: Env,
  access: { readOnly: boolean; allowDelete: boolean; buckets: string[] },
  errors: string[],
  warnings: string[],
): StoreSettings[] {
  const { readOnly, allowDelete, buckets } = access;
  const named = namedStores(
    cli.profiles?.length ? cli.profiles : splitList(envValue(env, "STORE_PROFILES"), ","),
    env,
    {
      readOnly,
      allowDelete,
      checkEndpoint: (raw, errs, label) => {
        const own: string[] = [];
        const url = checkEndpoint(raw, own);
        errs.push(...own.map((e) => `${label}: ${e}`));
        return url;
      },
      checkRegion: (value, errs, label) => {
        if (!/^[a-z0-9][a-z0-9-]{0,62}$/i.test(value)) errs.push(`${label}: region "${value}" is not a region name.`);
      },
    },
    errors,
  );
  const singleGiven =
    [cli.accessKeyId, cli.secretAccessKey, cli.sessionToken, cli.region, cli.endpointUrl].some(
      (v) => v !== undefined && v.trim() !== "",
    ) || SINGLE_STORE_VARIABLES.some((v) => envValue(env, v) !== undefined);
  // Read (and checked) even when a named store is the default: a wrong STORE_* value is reported either way.
  const single = defaultStore(cli, env, access, errors, warnings);
  const stores =
    named.length > 0 && !singleGiven
      ? [{ ...named[0]!, buckets: buckets.length > 0 ? buckets : named[0]!.buckets }, ...named.slice(1)]
      : [single, ...named];
  for (const store of stores) if (store.customerKey) checkCustomerKeyTransport(store, errors);
  return stores;
}

const SINGLE_STORE_VARIABLES = [
  "STORE_ACCESS_KEY_ID",
  "STORE_SECRET_ACCESS_KEY",
  "STORE_SESSION_TOKEN",
  "STORE_REGION",
  "STORE_ENDPOINT_URL",
];

/** The store the single-store settings describe ("default"). */
function defaultStore(
  cli: CliOptions,
  env: Env,
  access: { readOnly: boolean; allowDelete: boolean; buckets: string[] },
  errors: string[],
  warnings: string[],
): StoreSettings {
  const region =
    firstGiven(
      cli.region,
      envValue(env, "STORE_REGION"),
      envValue(env, "AWS_REGION"),
      envValue(env, "AWS_DEFAULT_REGION"),
    ) ?? DEFAULT_REGION;
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/i.test(region)) {
    errors.push(
      `region: "${region}" is not a region name (letters, digits and hyphens, e.g. us-east-1, eu-central-1, auto).`,
    );
  }
  const endpointRaw = firstGiven(cli.endpointUrl, envValue(env, "STORE_ENDPOINT_URL"));
  const endpointUrl = endpointRaw === undefined ? undefined : checkEndpoint(endpointRaw.trim(), errors);
  const connection = connectionDefaults(endpointRaw);
  return {
    name: DEFAULT_STORE,
    ...readCredentials(cli, env, errors, warnings),
    region,
    endpointUrl,
    forcePathStyle: readBoolean(env, "STORE_FORCE_PATH_STYLE", connection.forcePathStyle, errors),
    checksums: readChecksumMode(env, connection.checksums, errors),
    provider: readProvider(envValue(env, "STORE_PROVIDER"), endpointUrl, errors, "STORE_PROVIDER"),
    readOnly: access.readOnly,
    allowDelete: access.allowDelete,
    buckets: access.buckets,
    ...readStoreEncryption(
      (v) => envValue(env, `STORE_${v}`),
      (v) => `STORE_${v}`,
      errors,
    ),
  };
}

/**
 * Credentials: each field from the option, else its STORE_* variable; with
 * neither key given, the AWS SDK's default chain (AWS_*, profiles, SSO, roles).
 */
function readCredentials(
  cli: CliOptions,
  env: Env,
  errors: string[],
  warnings: string[],
): { credentials: StaticCredentials | undefined; credentialSource: string } {
  const accessKeyId = firstGiven(cli.accessKeyId, envValue(env, "STORE_ACCESS_KEY_ID"));
  const secretAccessKey = firstGiven(cli.secretAccessKey, envValue(env, "STORE_SECRET_ACCESS_KEY"));
  const sessionToken = firstGiven(cli.sessionToken, envValue(env, "STORE_SESSION_TOKEN"));
  if (cli.secretAccessKey) {
    warnings.push(
      "the secret access key was given on the command line, where other users can see it in the process list; pass it as STORE_SECRET_ACCESS_KEY in the client's env map instead.",
    );
  }
  if (cli.sessionToken) {
    warnings.push(
      "the session token was given on the command line, where other users can see it in the process list; pass it as STORE_SESSION_TOKEN instead.",
    );
  }
  if (accessKeyId && secretAccessKey)
    return {
      credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
      credentialSource: cli.accessKeyId || cli.secretAccessKey ? "command line" : "STORE_* environment variables",
    };
  if (accessKeyId || secretAccessKey) {
    const missing = accessKeyId
      ? "secret access key (--secret-access-key or STORE_SECRET_ACCESS_KEY)"
      : "access key id (--access-key-id or STORE_ACCESS_KEY_ID)";
    errors.push(
      `credentials: only half of a key pair was given; the ${missing} is missing. Give both, or neither to use the AWS default credential chain.`,
    );
  } else if (sessionToken) {
    errors.push(
      "credentials: a session token was given without an access key id and secret access key; give all three.",
    );
  }
  return {
    credentials: undefined,
    credentialSource:
      "AWS default credential chain (AWS_* variables, AWS_PROFILE, SSO, web identity, container or instance role)",
  };
}

function readChecksumMode(env: Env, fallback: ChecksumMode, errors: string[]): ChecksumMode {
  const value = envValue(env, "STORE_CHECKSUMS")?.trim().toLowerCase();
  if (value === undefined) return fallback;
  if (value === "when_required") return "WHEN_REQUIRED";
  if (value === "when_supported") return "WHEN_SUPPORTED";
  errors.push(`STORE_CHECKSUMS: "${value}" must be when_required or when_supported.`);
  return fallback;
}

/**
 * An SSE-C key goes with every object request of its store, in headers: over plain HTTP it would cross the network in
 * clear, so only a loopback endpoint (a store on this machine) may be http://.
 */
function checkCustomerKeyTransport(store: { name: string; endpointUrl?: string | undefined }, errors: string[]): void {
  if (!store.endpointUrl) return;
  let url: URL;
  try {
    url = new URL(store.endpointUrl);
  } catch {
    return; // the endpoint's own check says what is wrong with it
  }
  if (url.protocol !== "http:" || isLoopback(url.hostname)) return;
  errors.push(
    `store ${store.name}: an SSE-C key (STORE_SSE_C_KEY) is set with the plain-HTTP endpoint ${url.origin}, which would send the key in clear with every request. Use the store's https:// endpoint (plain http:// is allowed only on loopback).`,
  );
}
