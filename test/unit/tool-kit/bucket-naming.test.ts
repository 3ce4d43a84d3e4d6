import { expect, test } from "bun:test";
import { bucketNameProblem } from "../../../src/tool-kit/bucket-naming.ts";

test.each([
  ["my-bucket", undefined],
  ["a.b.c", undefined],
  ["123", undefined],
  ["ab", "3 to 63"],
  ["a".repeat(64), "3 to 63"],
  ["MyBucket", "uppercase"],
  ["my_bucket", "underscores"],
  ["-abc", "begin and end"],
  ["abc-", "begin and end"],
  ["a..b", "adjacent dots"],
  ["a.-b", "dot next to a hyphen"],
  ["192.168.1.1", "IP address"],
  ["xn--abc", "reserved prefix"],
  ["abc-s3alias", "reserved suffix"],
  ["bücket", "only lowercase letters"],
])("%p → %p", (name, problem) => {
  const got = bucketNameProblem(name);
  if (problem === undefined) expect(got).toBeUndefined();
  else expect(got).toContain(problem);
});
