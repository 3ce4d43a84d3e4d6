/** An object's head as the store's HeadObject answer gives it: encryption, an archived object's restore, object lock. */
import { expect, test } from "bun:test";
import { headOf, restoreOf } from "../../../src/storage/object-params.ts";

test("x-amz-restore: under way, available until a date, or none asked for", () => {
  expect(restoreOf('ongoing-request="true"')).toEqual({ in_progress: true, expires: undefined });
  expect(restoreOf('ongoing-request="false", expiry-date="Fri, 21 Dec 2012 00:00:00 GMT"')).toEqual({
    in_progress: false,
    expires: "2012-12-21T00:00:00.000Z",
  });
  expect(restoreOf(undefined)).toBeNull();
  expect(restoreOf('ongoing-request="false", expiry-date="not a date"')).toEqual({ in_progress: false });
});

test("encryption and object lock come through as the store says them, and are null when it says nothing", () => {
  const head = headOf({
    $metadata: {},
    ServerSideEncryption: "aws:kms",
    SSEKMSKeyId: "arn:aws:kms:eu-west-1:1:key/k",
    ObjectLockMode: "COMPLIANCE",
    ObjectLockRetainUntilDate: new Date("2030-01-01T00:00:00Z"),
    ObjectLockLegalHoldStatus: "ON",
    StorageClass: "GLACIER",
    Restore: 'ongoing-request="true"',
  });
  expect(head.encryption).toEqual({ algorithm: "aws:kms", kms_key_id: "arn:aws:kms:eu-west-1:1:key/k" });
  expect(head.object_lock).toEqual({ mode: "COMPLIANCE", retain_until: "2030-01-01T00:00:00.000Z", legal_hold: "ON" });
  expect(head.restore).toEqual({ in_progress: true, expires: undefined });
  expect(head.storage_class).toBe("GLACIER");
  const plain = headOf({ $metadata: {} });
  expect([plain.encryption, plain.restore, plain.object_lock]).toEqual([null, null, null]);
  expect(headOf({ $metadata: {}, SSECustomerAlgorithm: "AES256" }).encryption).toEqual({
    algorithm: "customer key",
    customer_algorithm: "AES256",
  });
});
