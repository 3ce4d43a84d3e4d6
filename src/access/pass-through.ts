/**
 * Identity pass-through (--sts-role-arn): instead of the server's key, a
 * caller's calls to the default store run with short-lived credentials the
 * store's STS issues for that caller, in exchange for the caller's own
 * access token (AssumeRoleWithWebIdentity, through the AWS SDK's web
 * identity provider). The store's IAM and bucket policies then decide, and
 * its logs name the person (the session is named after the token's sub).
 * One set of storages per token, made on first use and kept while the token
 * is valid (the SDK renews the credentials before they expire), at most
 * MAX_CALLERS of them: the least recently used are dropped first. Each holds
 * S3 clients of its own (and their connections), hence the bound.
 */
import { createHash } from "node:crypto";
import type { Config } from "../config/config.ts";
import { ActionableError } from "../runtime/errors.ts";
import type { Storage } from "../storage/index.ts";
import type { Caller } from "./caller.ts";

export const MAX_CALLERS = 200;

export interface PassThroughSettings {
  roleArn: string;
  /** Where STS is: the store's own endpoint for Ceph RGW and MinIO; undefined for AWS's regional STS. */
  endpoint: string | undefined;
  region: string;
  durationSeconds: number;
}

type Storages = { storage: Storage; storageOf(name: string): Storage };
type MakeStorages = (config: Config) => Storages;

/** An STS session name: [\w+=,.@-], 2 to 64 characters (AWS's rule). */
export function sessionName(sub: string): string {
  const cleaned = sub.replace(/[^\w+=,.@-]/g, "-").slice(0, 64);
  return cleaned.length >= 2 ? cleaned : `caller-${cleaned}`.slice(0, 64);
}

export class PassThrough {
  readonly #made = new Map<string, { storages: Storages; until: number }>();

  constructor(
    private readonly settings: PassThroughSettings,
    private readonly config: Config,
    private readonly make: MakeStorages,
  ) {}

  /** The storages a caller's calls use: their own credentials on the default store (the other stores as configured). */
  storagesFor(caller: Caller, shared: Storages): Storages {
    const token = caller.webIdentityToken;
    if (!token) return shared;
    const key = createHash("sha256").update(token).digest("hex");
    const now = Date.now();
    const known = this.#made.get(key);
    if (known && known.until > now) {
      // Most recently used last: the oldest go first when the map is full.
      this.#made.delete(key);
      this.#made.set(key, known);
      return known.storages;
    }
    for (const [k, entry] of this.#made) if (entry.until <= now) this.#made.delete(k);
    while (this.#made.size >= MAX_CALLERS) this.#made.delete(this.#made.keys().next().value!);
    const own = this.make({
      ...this.config,
      credentials: undefined,
      credentialSource: `STS AssumeRoleWithWebIdentity for ${caller.id}`,
      credentialProvider: this.#provider(token, caller),
    });
    const storages: Storages = {
      storage: own.storage,
      storageOf: (name) => (name === this.config.stores[0]?.name ? own.storage : shared.storageOf(name)),
    };
    const exp = typeof caller.claims?.exp === "number" ? caller.claims.exp * 1000 : now + 5 * 60_000;
    this.#made.set(key, { storages, until: exp });
    return storages;
  }

  #provider(token: string, caller: Caller): NonNullable<Config["credentialProvider"]> {
    const { roleArn, endpoint, region, durationSeconds } = this.settings;
    let provider:
      | (() => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiration?: Date }>)
      | undefined;
    return async () => {
      if (!provider) {
        const { fromWebToken } = await import("@aws-sdk/credential-provider-web-identity");
        provider = fromWebToken({
          roleArn,
          webIdentityToken: token,
          roleSessionName: sessionName(caller.sub ?? caller.id),
          durationSeconds,
          clientConfig: { region, ...(endpoint ? { endpoint } : {}) },
        });
      }
      try {
        return await provider();
      } catch (err) {
        const e = err as { name?: string; Code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
        throw new ActionableError({
          resource: `sts ${roleArn}`,
          code: "StsDenied",
          status: e.$metadata?.httpStatusCode,
          message: `The store's STS would not give ${caller.id} credentials for the role (${e.Code ?? e.name ?? "error"}${e.message ? `: ${e.message.slice(0, 120)}` : ""}).`,
          hint: "check that the role trusts the identity provider and this token's audience, and that the token has not expired; the server's own key is not used instead.",
        });
      }
    };
  }
}
