/**
 * Ceph RGW's IAM API (roles, role policies, OpenID Connect providers), signed
 * as the test user, who has the roles and oidc-provider caps when the Ceph
 * was started with STS (ceph-rgw.sh, CEPH_STS=1).
 * For the identity pass-through tests: a role that trusts the test issuer.
 */

import { createHash, createHmac } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import type { S3Server } from "../../scripts/s3/local-servers.ts";

type Bytes = string | ArrayBuffer | ArrayBufferView;
const toBuffer = (data: Bytes) =>
  typeof data === "string"
    ? Buffer.from(data)
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 as the signer wants it (a class, HMAC when given a secret). */
class Sha256 {
  readonly #hash;
  constructor(secret?: Bytes) {
    this.#hash = secret ? createHmac("sha256", toBuffer(secret)) : createHash("sha256");
  }
  update(data: Bytes): void {
    this.#hash.update(toBuffer(data));
  }
  reset(): void {}
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

/** One IAM action against a test Ceph started with STS; throws with the store's answer when it is not 200. */
export async function rgwIam(server: S3Server, params: Record<string, string>): Promise<string> {
  const url = new URL(server.endpoint);
  const signer = new SignatureV4({
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    region: server.region,
    service: "iam",
    sha256: Sha256,
  });
  const body = new URLSearchParams(params).toString();
  const signed = await signer.sign({
    method: "POST",
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: "/",
    headers: { host: url.host, "content-type": "application/x-www-form-urlencoded" },
    body,
  });
  const res = await fetch(`${server.endpoint}/`, {
    method: "POST",
    headers: signed.headers as Record<string, string>,
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`RGW IAM ${params.Action}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}
