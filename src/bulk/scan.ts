/** Shared by the scanning tools (storage_usage, find_objects): where a scan resumes, and how far one call goes. */
import { z } from "zod";
import { ActionableError } from "../runtime/errors.ts";

export const DEFAULT_KEYS_SCANNED = 1_000_000;

export const maxKeysScanned = z
  .number()
  .int()
  .min(1)
  .max(10_000_000)
  .describe(`Default ${DEFAULT_KEYS_SCANNED.toLocaleString("en-US")}.`);

export const continuationToken = z.string().min(1).max(2048).describe("From a truncated result.");

/** A token naming the last key scanned (the listing resumes after it). */
export function tokenAfter(key: string): string {
  return Buffer.from(`k:${key}`, "utf8").toString("base64url");
}

export function keyFromToken(token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  const text = Buffer.from(token, "base64url").toString("utf8");
  if (!text.startsWith("k:")) {
    throw new ActionableError({
      resource: "continuation_token",
      code: "InvalidParameter",
      message: "This continuation_token was not made by this tool.",
      hint: "pass the continuation_token of the previous result as it is, or leave it out to start over.",
    });
  }
  return text.slice(2);
}

/** An ISO 8601 date or time, e.g. 2026-01-01 or 2026-01-01T12:00:00Z. */
export const isoTime = (what: string) =>
  z
    .string()
    .max(64)
    .refine(
      (s) => !Number.isNaN(Date.parse(s)),
      `${what} must be an ISO 8601 date or time, e.g. 2026-01-01 or 2026-01-01T12:00:00Z`,
    )
    .describe('ISO 8601, e.g. "2026-01-01".');

/** The fields every scan result ends with: how far it read, and how to go on. */
export const scanEnd = {
  keys_scanned: z.number(),
  truncated: z.boolean(),
  continuation_token: z.string().optional(),
  next: z.string().optional(),
};
