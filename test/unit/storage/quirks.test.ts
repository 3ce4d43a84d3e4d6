/** Store differences as data: a row a provider, the provider from the endpoint or the operator, each tolerance gated by its field. */
import { describe, expect, test } from "bun:test";
import { PROVIDERS, providerOfEndpoint, readProvider } from "../../../src/config/store-provider.ts";
import { refuseIfPresent } from "../../../src/storage/object-params.ts";
import { deleteMarkerBehind } from "../../../src/storage/objects.ts";
import { providerOfAnswer, QUIRKS, quirksOf } from "../../../src/storage/quirks.ts";

describe("the provider", () => {
  test("from the endpoint's host, else other; the operator's word wins; a wrong word is a configuration error", () => {
    expect(providerOfEndpoint(undefined)).toBe("aws");
    expect(providerOfEndpoint("https://s3.eu-west-3.amazonaws.com")).toBe("aws");
    expect(providerOfEndpoint("https://abc.r2.cloudflarestorage.com")).toBe("r2");
    expect(providerOfEndpoint("https://s3.us-west-004.backblazeb2.com")).toBe("b2");
    expect(providerOfEndpoint("http://127.0.0.1:9000")).toBe("other");
    expect(providerOfEndpoint("https://evil-amazonaws.com.example")).toBe("other");
    const errors: string[] = [];
    expect(readProvider("Ceph", "http://127.0.0.1:7480", errors, "STORE_PROVIDER")).toBe("ceph");
    expect(readProvider("wasabi", "https://s3.wasabisys.com", errors, "STORE_PROVIDER")).toBe("other");
    expect(errors).toEqual([`STORE_PROVIDER: "wasabi" must be one of ${PROVIDERS.join(", ")}.`]);
  });

  test("what a store's answer says it is (doctor's check)", () => {
    expect(providerOfAnswer(null, "tx000001f7c2a1d4b6d3c1e-006745a1b2-1234-default")).toBe("ceph");
    expect(providerOfAnswer("MinIO")).toBe("minio");
    expect(providerOfAnswer("AmazonS3")).toBe("aws");
    expect(providerOfAnswer("cloudflare")).toBe("r2");
    expect(providerOfAnswer("nginx")).toBeUndefined();
  });
});

const SEND = { abortSignal: undefined, requestTimeout: 1000 } as never;

describe("the quirks table", () => {
  test("every provider has a row with every field; an unknown store gets every tolerance", () => {
    const fields = Object.keys(QUIRKS.other).sort();
    for (const provider of PROVIDERS) expect(Object.keys(QUIRKS[provider]).sort()).toEqual(fields);
    expect(quirksOf(undefined)).toEqual(QUIRKS.other);
    // Ceph RGW 16 is the strictest store known, but for the signed chunks it checks (a store not known to could keep the
    // frames) and the part ETags it composes (a store not known to would have every copy in parts sent twice).
    expect(QUIRKS.other).toEqual({ ...QUIRKS.ceph, signedChunks: false, composesPartEtags: false });
    expect(QUIRKS.aws.saysDeleteMarkerOn404).toBe(true);
    expect(QUIRKS.other.saysDeleteMarkerOn404).toBe(false);
  });

  test("a 404 HEAD asks the key's versions only of a store that may not say it hit a delete marker", async () => {
    const sent: string[] = [];
    const handle = (provider: "aws" | "ceph") => ({
      client: {
        send: async (command: { constructor: { name: string } }) => {
          sent.push(`${provider}:${command.constructor.name}`);
          return { DeleteMarkers: [{ Key: "k", VersionId: "v1", IsLatest: true }] };
        },
      } as never,
      sdk: { ListObjectVersionsCommand: class ListObjectVersionsCommand {} } as never,
      quirks: quirksOf(provider),
    });
    const notFound = { $metadata: { httpStatusCode: 404 }, $response: { headers: {} } };
    const addr = { bucket: "b", key: "k" };
    expect(await deleteMarkerBehind(notFound, addr, handle("aws"), SEND)).toBeUndefined();
    expect(await deleteMarkerBehind(notFound, addr, handle("ceph"), SEND)).toBe("v1");
    expect(sent).toEqual(["ceph:ListObjectVersionsCommand"]);
    // Said in the answer: no listing, whoever the store is.
    const said = {
      $metadata: { httpStatusCode: 404 },
      $response: { headers: { "x-amz-delete-marker": "true", "x-amz-version-id": "v9" } },
    };
    expect(await deleteMarkerBehind(said, addr, handle("ceph"), SEND)).toBe("v9");
    expect(sent).toHaveLength(1);
  });

  test("if_absent asks with a HEAD first unless the store honours If-None-Match on the one request that writes", async () => {
    const sent: string[] = [];
    const handle = (provider: "aws" | "ceph", present: boolean) =>
      ({
        client: {
          send: async (command: { constructor: { name: string } }) => {
            sent.push(`${provider}:${command.constructor.name}`);
            if (!present) throw { $metadata: { httpStatusCode: 404 } };
            return {};
          },
        },
        sdk: { HeadObjectCommand: class HeadObjectCommand {} },
        quirks: quirksOf(provider),
      }) as never;
    const one = { bucket: "b", key: "k", oneRequest: true };
    await refuseIfPresent(handle("aws", true), one, SEND);
    expect(sent).toEqual([]);
    // A multipart write is refused before it moves bytes, whoever the store is.
    await expect(refuseIfPresent(handle("aws", true), { ...one, oneRequest: false }, SEND)).rejects.toMatchObject({
      name: "PreconditionFailed",
    });
    await expect(refuseIfPresent(handle("ceph", true), one, SEND)).rejects.toMatchObject({
      name: "PreconditionFailed",
    });
    await refuseIfPresent(handle("ceph", false), one, SEND);
    expect(sent).toEqual(["aws:HeadObjectCommand", "ceph:HeadObjectCommand", "ceph:HeadObjectCommand"]);
  });
});
