import { logValue } from "../../runtime/redact.ts";
import { addressesOf } from "./addresses.ts";

/**
 * `get_object bucket="b" key="k"` for debug logs; never file contents. The
 * bucket and key are the arguments the tool's card marks as such (so a new
 * tool's are named without a word here). Values come from the model: quoted
 * and escaped (a newline cannot forge a log line) and scrubbed of secrets.
 */
export function describeCall(name: string, args: Record<string, unknown>): string {
  const addresses = addressesOf(name);
  const single = (names: readonly string[] | undefined) => (names ?? []).filter((n) => !addresses?.lists.includes(n));
  const parts = [name];
  for (const [fields, label] of [
    [["store"], "store"],
    [addresses?.bucket ?? ["bucket_name"], "bucket"],
    [single(addresses?.key).filter((n) => !n.endsWith("prefix")), "key"],
    [["prefix"], "prefix"],
    [["mode"], "mode"],
  ] as const) {
    const value = fields.map((f) => args[f]).find((v) => typeof v === "string");
    if (typeof value === "string") parts.push(`${label}=${logValue(value)}`);
  }
  return parts.join(" ");
}
