/** The pure parts of the settings tools: reading a bucket policy, and lifecycle rules to and from S3's form. */
import { expect, test } from "bun:test";
import { ruleFromSdk, ruleToSdk } from "../../../src/storage/lifecycle-form.ts";
import { accessWords, parsePolicy, publicGrants } from "../../../src/tool-kit/bucket-policy.ts";
import { ruleSentence } from "../../../src/tools/get-bucket-settings.ts";

const statement = (extra: Record<string, unknown>) =>
  JSON.stringify({
    Version: "2012-10-17",
    Statement: [{ Effect: "Allow", Action: "s3:GetObject", Resource: "arn:aws:s3:::b/*", ...extra }],
  });

test("a policy must be JSON with statements that have Effect and Action; errors say which", () => {
  expect(() => parsePolicy("{nope", "s3://b")).toThrow(/InvalidPolicyJson|not valid JSON/);
  expect(() => parsePolicy('{"Statement": []}', "s3://b")).toThrow(/Statement/);
  expect(() => parsePolicy('{"Statement": [{"Effect": "Maybe", "Action": "s3:*"}]}', "s3://b")).toThrow(/Effect/);
  expect(() => parsePolicy(statement({ Pad: "x".repeat(21 * 1024) }), "s3://b")).toThrow(/20480 bytes/);
  expect(parsePolicy(statement({ Principal: { AWS: "arn:aws:iam::1:user/a" } }), "s3://b")).toHaveProperty("Statement");
});

test("what a policy gives everyone: Principal * in its forms, NotPrincipal; Deny and named principals are not public", () => {
  expect(publicGrants(parsePolicy(statement({ Principal: "*" }), "b"))).toEqual(["s3:GetObject on arn:aws:s3:::b/*"]);
  expect(
    publicGrants(
      parsePolicy(statement({ Principal: { AWS: ["arn:aws:iam::1:root", "*"] }, Condition: { IpAddress: {} } }), "b"),
    ),
  ).toEqual(["s3:GetObject on arn:aws:s3:::b/* (with conditions)"]);
  expect(publicGrants(parsePolicy(statement({ NotPrincipal: { AWS: "arn:aws:iam::1:root" } }), "b"))).toHaveLength(1);
  expect(publicGrants(parsePolicy(statement({ Principal: { AWS: "arn:aws:iam::1:root" } }), "b"))).toEqual([]);
  expect(publicGrants(parsePolicy(statement({ Principal: "*", Effect: "Deny" }), "b"))).toEqual([]);
  expect(accessWords(["s3:GetObject on x", "s3:ListBucket on y"])).toBe("read and list");
  expect(accessWords(["s3:* on x"])).toBe("full access");
});

test("lifecycle rules: the tools' form round-trips through S3's; what it cannot say is named", () => {
  const rule = {
    id: "r",
    enabled: true,
    prefix: "tmp/",
    expire_after_days: 7,
    noncurrent_expire_after_days: 30,
    keep_noncurrent_versions: 2,
    abort_incomplete_uploads_after_days: 3,
    transition_after_days: 90,
    transition_storage_class: "GLACIER",
  };
  expect(ruleFromSdk(ruleToSdk(rule))).toEqual(rule);
  const tagged = { id: "t", enabled: false, prefix: "a/", tag: { key: "k", value: "v" }, expire_after_days: 1 };
  expect(ruleFromSdk(ruleToSdk(tagged))).toEqual(tagged);
  const odd = ruleFromSdk({
    ID: "o",
    Status: "Enabled",
    Filter: {
      And: {
        Tags: [
          { Key: "a", Value: "1" },
          { Key: "b", Value: "2" },
        ],
      },
    },
    Expiration: { ExpiredObjectDeleteMarker: true },
  });
  expect(odd.other).toEqual(["2 tags in the filter", "expired delete markers removed"]);
  expect(ruleSentence(rule)).toContain("objects under tmp/ expire after 7 days");
  expect(ruleSentence(tagged)).toContain("(rule t disabled)");
});
