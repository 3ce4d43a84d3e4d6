import { logValue } from "../../runtime/redact.ts";

/**
 * `get_object bucket="b" key="k"` for debug logs; never file contents. Values
 * come from the model: quoted and escaped (a newline cannot forge a log line)
 * and scrubbed of secrets.
 */
export function describeCall(name: string, args: Record<string, unknown>): string {
  const parts = [name];
  for (const [field, label] of [
    ["store", "store"],
    ["bucket_name", "bucket"],
    ["object_key", "key"],
    ["prefix", "prefix"],
    ["mode", "mode"],
  ] as const) {
    const value = args[field];
    if (typeof value === "string") parts.push(`${label}=${logValue(value)}`);
  }
  return parts.join(" ");
}
