/** Reading a bucket policy document: is it valid JSON of the right shape, and what does it give everyone? */
import { ActionableError } from "../runtime/errors.ts";

/** S3's limit for a bucket policy document. */
export const POLICY_MAX_BYTES = 20 * 1024;

type Statement = {
  Effect?: unknown;
  Principal?: unknown;
  NotPrincipal?: unknown;
  Action?: unknown;
  NotAction?: unknown;
  Resource?: unknown;
  Condition?: unknown;
};

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

function everyone(principal: unknown): boolean {
  if (principal === "*") return true;
  if (typeof principal === "object" && principal !== null)
    return Object.values(principal).some((p) => list(p).includes("*"));
  return false;
}

/** A parsed policy, or an error saying what is wrong with the text. */
export function parsePolicy(text: string, resource: string): { Statement?: unknown } {
  if (Buffer.byteLength(text) > POLICY_MAX_BYTES)
    throw new ActionableError({
      resource,
      code: "PolicyTooLarge",
      message: `The policy is over ${POLICY_MAX_BYTES} bytes, S3's limit.`,
      hint: "shorten it (combine statements, use wildcards).",
    });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ActionableError({
      resource,
      code: "InvalidPolicyJson",
      message: `The policy is not valid JSON: ${(err as Error).message}.`,
      hint: 'send the policy document as JSON text, e.g. {"Version":"2012-10-17","Statement":[…]}.',
    });
  }
  const statements =
    typeof doc === "object" && doc !== null && !Array.isArray(doc)
      ? list((doc as { Statement?: unknown }).Statement)
      : [];
  const bad =
    statements.length === 0 ||
    statements.some(
      (s) =>
        typeof s !== "object" ||
        s === null ||
        !["Allow", "Deny"].includes(String((s as Statement).Effect)) ||
        ((s as Statement).Action === undefined && (s as Statement).NotAction === undefined),
    );
  if (bad)
    throw new ActionableError({
      resource,
      code: "InvalidPolicy",
      message:
        "The policy needs a Statement list whose every statement has Effect (Allow or Deny) and Action (or NotAction).",
      hint: 'e.g. {"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::123456789012:user/ana"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::bucket/*"]}]}.',
    });
  return doc as { Statement?: unknown };
}

/** What the policy allows everyone (Principal "*", or NotPrincipal): one line per statement, conditions noted. */
export function publicGrants(doc: { Statement?: unknown }): string[] {
  return list(doc.Statement)
    .map((s) => s as Statement)
    .filter((s) => s.Effect === "Allow" && (everyone(s.Principal) || s.NotPrincipal !== undefined))
    .map((s) => {
      const actions =
        s.Action !== undefined ? list(s.Action).join(", ") : `everything except ${list(s.NotAction).join(", ")}`;
      const resources = list(s.Resource).join(", ") || "(no Resource)";
      return `${actions} on ${resources}${s.Condition ? " (with conditions)" : ""}`;
    });
}

/** "read", "write", "list"… for a summary line. */
export function accessWords(grants: string[]): string {
  const text = grants.join(" ");
  const words = [
    /s3:\*|"\*"|^\* /.test(text) || /(^|[ ,])\*( |,|$)/.test(text) ? "full access" : "",
    /GetObject/.test(text) ? "read" : "",
    /PutObject/.test(text) ? "write" : "",
    /List/.test(text) ? "list" : "",
    /Delete/.test(text) ? "delete" : "",
  ].filter(Boolean);
  return words.length ? words.join(" and ") : "access";
}
