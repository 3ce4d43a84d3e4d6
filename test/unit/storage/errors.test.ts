/** What the store's error codes say to the model: a text a code, made from the call's context where it names a place. */
import { expect, test } from "bun:test";
import { toStorageError } from "../../../src/storage/errors.ts";

const refused = (code: string, status: number) => ({
  name: code,
  message: "raw",
  $metadata: { httpStatusCode: status },
});

test("a missing object names the folder to list; a missing version or bucket says so", () => {
  const object = toStorageError(refused("NoSuchKey", 404), { bucket: "b", key: "reports/2026/q1.csv" });
  expect([object.code, object.message]).toEqual(["NoSuchKey", "The object does not exist."]);
  expect(object.hint).toContain('bucket_name "b" and prefix "reports/2026/"');
  const version = toStorageError(refused("NoSuchKey", 404), { bucket: "b", key: "k", versionId: "v7" });
  expect(version.message).toBe("No object or version v7 exists at this key.");
  expect(toStorageError(refused("NotFound", 404), { bucket: "b" }).message).toBe("The bucket does not exist.");
  expect(toStorageError(refused("NoSuchVersion", 404), { bucket: "b", key: "k", versionId: "v9" }).message).toBe(
    "Version v9 does not exist.",
  );
});

test("codes of one meaning share their text; a code the table lacks, even one named like an object's property, gets the store's own words", () => {
  const denied = toStorageError(refused("AllAccessDisabled", 403), { bucket: "b", key: "k" });
  expect(denied.message).toBe(toStorageError(refused("AccessDenied", 403), { bucket: "b", key: "k" }).message);
  expect(toStorageError(refused("SlowDown", 503), { bucket: "b" }).hint).toBe("retry later.");
  // valueOf is Object.prototype's: looked up without an own-property check, it would be called and throw.
  for (const odd of ["constructor", "toString", "valueOf", "SomethingNew"]) {
    const e = toStorageError(refused(odd, 400), { bucket: "b", key: "k" });
    expect(e.message).toBe("The store refused the request: raw.");
  }
});
