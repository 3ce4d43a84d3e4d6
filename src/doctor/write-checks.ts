/**
 * --write-test: a tiny object put, read back and deleted in the configured
 * checksum mode and in the AWS SDK's default one, with advice for
 * STORE_CHECKSUMS; whether the object is really gone is checked, and one
 * that may be left behind is a failure that names it.
 */

import { randomBytes } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import type { ChecksumMode, Config } from "../config/config.ts";
import type { Check } from "./report.ts";
import { codeOf, type Sdk, type StoreProbe, statusOf } from "./store.ts";

interface RoundTrip {
  ok: boolean;
  detail: string;
  /** The test object, when it may still be in the bucket, and why. */
  leftBehind?: { key: string; why: string };
}

/** Put, get and delete a tiny object in `mode`; true when the store took it and gave it back intact. Whether it is really gone is checked, not assumed. */
async function roundTrip(probe: StoreProbe, bucket: string, mode: ChecksumMode): Promise<RoundTrip> {
  const client = await probe.client({ checksums: mode });
  const key = `.store-mcp-doctor/${randomBytes(8).toString("hex")}`;
  const body = `store-mcp-server doctor ${new Date().toISOString()}`;
  // Whether the object may exist: a PUT the store refused (an HTTP answer) wrote nothing; one that timed out may have.
  let written = false;
  let result: { ok: boolean; detail: string };
  try {
    written = true;
    await client
      .send(
        new probe.sdk.PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: Buffer.from(body),
          ContentType: "text/plain",
        }),
      )
      .catch((err: unknown) => {
        if (statusOf(err) !== undefined) written = false;
        throw err;
      });
    const got = await client.send(new probe.sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
    const text = await got.Body?.transformToString();
    result =
      text === body
        ? { ok: true, detail: "put, get and delete work" }
        : {
            ok: false,
            detail: `the object came back different (${text?.length ?? 0} bytes instead of ${body.length}): the store mangles what it receives`,
          };
  } catch (err) {
    result = { ok: false, detail: `${codeOf(err)} (HTTP ${statusOf(err) ?? "?"})` };
  }
  if (!written) return result;
  const why = await removeTestObject(client, probe.sdk, bucket, key);
  return why
    ? {
        ...result,
        ok: false,
        ...(result.ok ? { detail: "put and get work, delete does not" } : {}),
        leftBehind: { key, why },
      }
    : result;
}

/** Deletes the test object and makes sure it is gone; why it may not be, or undefined. */
async function removeTestObject(client: S3Client, sdk: Sdk, bucket: string, key: string): Promise<string | undefined> {
  try {
    await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }));
  } catch (err) {
    return `its DELETE failed: ${codeOf(err)} (HTTP ${statusOf(err) ?? "?"})`;
  }
  try {
    await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }));
    return "it is still there after its DELETE was answered";
  } catch (err) {
    return statusOf(err) === 404
      ? undefined
      : `whether it is gone could not be checked: ${codeOf(err)} (HTTP ${statusOf(err) ?? "?"})`;
  }
}

/** A failed check naming each test object that may be left, and how to remove it. */
function leftBehindChecks(bucket: string, trips: RoundTrip[]): Check[] {
  return trips.flatMap((t) =>
    t.leftBehind
      ? [
          {
            name: "write test clean-up",
            status: "fail" as const,
            detail: `left s3://${bucket}/${t.leftBehind.key} behind: ${t.leftBehind.why}`,
            fix: `delete it (aws s3 rm "s3://${bucket}/${t.leftBehind.key}") and allow these credentials s3:DeleteObject`,
          },
        ]
      : [],
  );
}

/** --write-test: the configured checksum mode, then the SDK's default, with a recommendation for STORE_CHECKSUMS; any test object left behind is a failure, named. */
export async function writeChecks(config: Config, probe: StoreProbe, bucket: string): Promise<Check[]> {
  const mode = config.checksums.toLowerCase();
  const configured = await roundTrip(probe, bucket, config.checksums);
  const checks: Check[] = [
    configured.ok
      ? { name: `write test (${mode})`, status: "ok", detail: `${configured.detail} in ${bucket}; nothing left behind` }
      : {
          name: `write test (${mode})`,
          status: "fail",
          detail: `${configured.detail} writing to ${bucket}`,
          fix: "check the bucket name and that the key may write there (s3:PutObject, s3:GetObject, s3:DeleteObject)",
        },
  ];
  const trips = [configured];
  // Only a store that takes writes at all can tell us about checksum modes.
  if (!configured.ok && config.checksums === "WHEN_SUPPORTED" && !configured.leftBehind) {
    const fallback = await roundTrip(probe, bucket, "WHEN_REQUIRED");
    trips.push(fallback);
    if (fallback.ok)
      checks.push({
        name: "SDK default checksums",
        status: "fail",
        detail: `the store refuses the AWS SDK's default (when_supported) checksums but takes writes without them`,
        fix: "set STORE_CHECKSUMS=when_required",
      });
  } else if (configured.ok) {
    const defaults =
      config.checksums === "WHEN_SUPPORTED" ? configured : await roundTrip(probe, bucket, "WHEN_SUPPORTED");
    if (defaults !== configured) trips.push(defaults);
    // Here the configured mode works; whether the SDK's default does too decides the advice.
    checks.push(
      defaults.ok
        ? {
            name: "SDK default checksums",
            status: "ok",
            detail: `the store accepts the AWS SDK's default (when_supported) checksums${config.checksums === "WHEN_REQUIRED" ? "; either STORE_CHECKSUMS works" : ""}`,
          }
        : {
            name: "SDK default checksums",
            status: "ok",
            detail: `the store refuses the AWS SDK's default checksums (${defaults.detail}); keep STORE_CHECKSUMS=when_required, as configured`,
          },
    );
  }
  return [...checks, ...leftBehindChecks(bucket, trips)];
}
