import { describe, expect, test } from "bun:test";
import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import { type RequestToSign, signV4 } from "../../../../src/storage/requests/sigv4.ts";

/** The SDK's hash interface over node:crypto, as its node runtime config builds it. */
class Sha256 {
  readonly #hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytesOf(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

function bytesOf(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === "string") return data;
  return data instanceof ArrayBuffer
    ? new Uint8Array(data)
    : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const identity = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const withToken = { ...identity, sessionToken: "FwoGZXIvYXdzEXAMPLE//token+with/odd=chars" };

/** The SDK's signer as the quick requests used it before (S3: the path signed as sent, no checksum added). */
async function sdkSigned(req: RequestToSign, id: typeof identity, region: string, at: Date) {
  const signer = new SignatureV4({
    credentials: id,
    region,
    service: "s3",
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const url = new URL(`http://${req.headers.host}${req.path}`);
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: req.path,
      query: req.query,
      headers: { ...req.headers },
    },
    { signingDate: at },
  );
  return signed.headers as Record<string, string>;
}

const cases: [string, RequestToSign][] = [
  [
    "a plain GET with If-Match",
    {
      method: "GET",
      path: "/bucket/dir/file.bin",
      query: {},
      headers: {
        host: "127.0.0.1:9000",
        "if-match": '"0cc175b9c0f1b6a831c399e269772661"',
        "x-amz-content-sha256": EMPTY,
      },
    },
  ],
  [
    "a ranged GET of a version, a key with encoded characters",
    {
      method: "GET",
      path: "/bucket/a%20b/%C3%A9t%C3%A9%21%28x%29.txt",
      query: { versionId: "3/L4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo" },
      headers: { host: "s3.eu-west-3.amazonaws.com", range: "bytes=0-2097151", "x-amz-content-sha256": EMPTY },
    },
  ],
  [
    "a part PUT with unsigned payload, metadata, unsignable headers and folded spaces",
    {
      method: "PUT",
      path: "/bucket/big.bin",
      query: { partNumber: "12", uploadId: "2~abc_DEF-ghi.jkl" },
      headers: {
        host: "bucket.example.com",
        "content-md5": "1B2M2Y8AsgTpgAmY7PhCfg==",
        "content-length": "5242880",
        "content-type": "application/octet-stream",
        "cache-control": "max-age=60",
        "user-agent": "whatever",
        "x-amz-meta-note": "  two   spaces\tand a tab ",
        "x-amz-storage-class": "STANDARD_IA",
        "x-amz-content-sha256": "UNSIGNED-PAYLOAD",
      },
    },
  ],
  [
    "a HEAD of the bucket itself",
    {
      method: "HEAD",
      path: "/",
      query: {},
      headers: { host: "bucket.s3.us-east-1.amazonaws.com", "x-amz-content-sha256": EMPTY },
    },
  ],
];

describe("signV4: the same Authorization as the SDK's SignatureV4 for the same request and instant", () => {
  for (const [name, req] of cases) {
    for (const id of [identity, withToken]) {
      test(`${name}${id === withToken ? ", with a session token" : ""}`, async () => {
        const at = new Date("2026-11-29T05:43:21.987Z");
        const ours = signV4(req, id, "eu-west-3", "s3", at).headers;
        const theirs = await sdkSigned(req, id, "eu-west-3", at);
        expect(ours.authorization).toBe(theirs.authorization!);
        expect(ours["x-amz-date"]).toBe("20261129T054321Z");
        expect(ours["x-amz-security-token"]).toBe(theirs["x-amz-security-token"]!);
      });
    }
  }

  test("another day, region or secret signs differently (the signing key is not reused across them)", () => {
    const req = cases[0]![1];
    const at = new Date("2026-11-29T05:43:21Z");
    const base = signV4(req, identity, "us-east-1", "s3", at).headers.authorization;
    expect(signV4(req, identity, "us-east-1", "s3", new Date("2026-11-30T05:43:21Z")).headers.authorization).not.toBe(
      base,
    );
    expect(signV4(req, identity, "eu-west-1", "s3", at).headers.authorization).not.toBe(base);
    expect(
      signV4(req, { ...identity, secretAccessKey: "other" }, "us-east-1", "s3", at).headers.authorization,
    ).not.toBe(base);
    expect(signV4(req, identity, "us-east-1", "s3", at).headers.authorization).toBe(base);
  });
});
