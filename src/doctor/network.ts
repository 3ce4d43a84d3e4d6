/**
 * The endpoint, step by step, before any S3 request: DNS, TCP, TLS (with
 * certificate problems named), one plain HTTP answer (its status, its
 * Server header, its Date for the clock check). Each step says what failed,
 * so "cannot reach the store" becomes "the name does not resolve" or "the
 * certificate has expired".
 */
import { lookup } from "node:dns/promises";
import { isIP, connect as tcpConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { StoreProvider } from "../config/store-provider.ts";
import { providerOfAnswer } from "../storage/quirks.ts";
import type { Check } from "./report.ts";

const TIMEOUT_MS = 5_000;

const PROVIDER_NAMES: Record<StoreProvider, string> = {
  aws: "AWS S3",
  ceph: "Ceph RGW",
  minio: "MinIO",
  r2: "Cloudflare R2",
  b2: "Backblaze B2",
  other: "an S3-compatible store",
};

/**
 * Whether the provider the server assumes (STORE_PROVIDER, else the endpoint's host) is the one the store's answer
 * names: its differences are handled by that name (storage/quirks.ts).
 */
export function providerCheck(configured: StoreProvider, answeredAs: StoreProvider | undefined): Check {
  if (answeredAs === undefined || answeredAs === configured)
    return {
      name: "provider",
      status: "ok",
      detail: `${configured}${answeredAs ? " (the store's answer agrees)" : ""}`,
    };
  return {
    name: "provider",
    status: "warn",
    detail: `the store answers as ${PROVIDER_NAMES[answeredAs]}, and the server takes it for "${configured}"`,
    fix: `set STORE_PROVIDER=${answeredAs} (or STORE_<NAME>_PROVIDER for a named store) so its differences are handled as ${PROVIDER_NAMES[answeredAs]}'s.`,
  };
}

/** Runs `fn` within `ms`, or fails with "timed out after …". */
function within<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  return Promise.race([
    fn(),
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s`)), ms).unref?.()),
  ]);
}

function tcp(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host, port });
    socket.setTimeout(TIMEOUT_MS, () =>
      socket.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s (blackholed, or a firewall drops it)`)),
    );
    socket.once("connect", () => {
      socket.end();
      resolve();
    });
    socket.once("error", reject);
  });
}

function tls(host: string, port: number): Promise<{ subject: string; validTo: string }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host, port, servername: isIP(host) ? undefined : host });
    socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error("the TLS handshake did not finish")));
    socket.once("secureConnect", () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve({ subject: String(cert?.subject?.CN ?? "?"), validTo: cert?.valid_to ?? "?" });
    });
    socket.once("error", reject);
  });
}

const TLS_FIXES: Record<string, string> = {
  CERT_HAS_EXPIRED: "the store's certificate has expired: the store's operator must renew it",
  DEPTH_ZERO_SELF_SIGNED_CERT:
    "the certificate is self-signed: add its CA with NODE_EXTRA_CA_CERTS=/path/ca.pem (or use http:// on a trusted network)",
  SELF_SIGNED_CERT_IN_CHAIN: "the chain ends in a private CA: add it with NODE_EXTRA_CA_CERTS=/path/ca.pem",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "the certificate's chain is incomplete or from a private CA: add the CA with NODE_EXTRA_CA_CERTS=/path/ca.pem",
  ERR_TLS_CERT_ALTNAME_INVALID:
    "the certificate is for another name: use the host name the certificate names in STORE_ENDPOINT_URL",
};

export interface EndpointFacts {
  /** The store's Date header, when it answered. */
  storeDate?: Date;
  /** What its answer says it is (Server header, request id). */
  answeredAs?: StoreProvider;
  reachable: boolean;
}

/** DNS, TCP, TLS and one HTTP answer; pushes a check for each step, stops at the first that fails. */
export async function probeEndpoint(endpoint: URL, checks: Pick<Check[], "push">): Promise<EndpointFacts> {
  const host = endpoint.hostname.replace(/^\[|\]$/g, "");
  const port = Number(endpoint.port || (endpoint.protocol === "https:" ? 443 : 80));
  if (!isIP(host)) {
    try {
      const { address } = await within(TIMEOUT_MS, () => lookup(host));
      checks.push({ name: "dns", status: "ok", detail: `${host} resolves to ${address}` });
    } catch (err) {
      checks.push({
        name: "dns",
        status: "fail",
        detail: `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        fix: "check the host name in STORE_ENDPOINT_URL (inside a container, localhost is the container itself)",
      });
      return { reachable: false };
    }
  }
  try {
    await tcp(host, port);
    checks.push({ name: "tcp", status: "ok", detail: `${host}:${port} accepts connections` });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const fix =
      code === "ECONNREFUSED"
        ? "nothing listens there: check the port in STORE_ENDPOINT_URL and that the store is running"
        : "check the address, the port and any firewall or VPN between here and the store";
    checks.push({
      name: "tcp",
      status: "fail",
      detail: `cannot connect to ${host}:${port} (${code ?? (err as Error).message})`,
      fix,
    });
    return { reachable: false };
  }
  if (endpoint.protocol === "https:") {
    try {
      const cert = await tls(host, port);
      checks.push({
        name: "tls",
        status: "ok",
        detail: `certificate for ${cert.subject}, valid until ${cert.validTo}`,
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      checks.push({
        name: "tls",
        status: "fail",
        detail: `TLS failed: ${code || (err as Error).message}`,
        fix: TLS_FIXES[code] ?? "check the certificate the store presents (openssl s_client -connect host:port)",
      });
      return { reachable: false };
    }
  }
  try {
    const res = await fetch(endpoint, {
      method: "GET",
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS * 2),
    });
    await res.body?.cancel();
    const server = res.headers.get("server");
    const answeredAs = providerOfAnswer(server, res.headers.get("x-amz-request-id"));
    const kind = answeredAs && PROVIDER_NAMES[answeredAs];
    const date = res.headers.get("date");
    checks.push({
      name: "http",
      status: "ok",
      detail: `HTTP ${res.status}${server ? `, Server: ${server}` : ""}${kind ? ` (${kind})` : ""}`,
    });
    return { reachable: true, ...(date ? { storeDate: new Date(date) } : {}), ...(answeredAs ? { answeredAs } : {}) };
  } catch (err) {
    checks.push({
      name: "http",
      status: "fail",
      detail: `no HTTP answer (${(err as Error).message})`,
      fix: "the port accepts connections but does not speak HTTP: check the scheme (http/https) and port in STORE_ENDPOINT_URL",
    });
    return { reachable: false };
  }
}

/** Warn above 5 minutes; S3 refuses signatures from 15 minutes on. */
export function clockCheck(storeDate: Date | undefined, now = new Date()): Check {
  if (!storeDate || Number.isNaN(storeDate.getTime()))
    return { name: "clock", status: "warn", detail: "the store sent no Date header to compare clocks with" };
  const skewS = Math.round((now.getTime() - storeDate.getTime()) / 1000);
  const what = `${Math.abs(skewS)} s ${skewS >= 0 ? "ahead of" : "behind"} the store`;
  if (Math.abs(skewS) >= 15 * 60)
    return {
      name: "clock",
      status: "fail",
      detail: `this machine's clock is ${what}`,
      fix: "sync the clock (e.g. timedatectl set-ntp true): S3 refuses signatures 15 minutes off",
    };
  if (Math.abs(skewS) > 5 * 60)
    return {
      name: "clock",
      status: "warn",
      detail: `this machine's clock is ${what}`,
      fix: "sync the clock: signatures fail from 15 minutes off",
    };
  return { name: "clock", status: "ok", detail: `within ${Math.max(1, Math.abs(skewS))} s of the store` };
}
