/** Reading STORE_* variables: empty means unset, lists, booleans and counts with errors collected, not thrown. */
export type Env = Record<string, string | undefined>;

/** Reads a STORE_* variable; an empty value counts as unset (MCP clients often pass ""). */
export function envValue(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value;
}

export function splitList(value: string | undefined, separator: string): string[] {
  return (value ?? "")
    .split(separator)
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

export function readBoolean(env: Env, name: string, fallback: boolean, errors: string[]): boolean {
  const value = envValue(env, name)?.trim().toLowerCase();
  if (value === undefined) return fallback;
  if (["1", "true", "yes", "on"].includes(value)) return true;
  if (["0", "false", "no", "off"].includes(value)) return false;
  errors.push(`${name}: "${value}" is not true or false.`);
  return fallback;
}

export function readPositiveInt(env: Env, name: string, fallback: number, errors: string[]): number {
  const value = envValue(env, name)?.trim();
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    errors.push(`${name}: "${value}" must be a whole number of at least 1.`);
    return fallback;
  }
  return Number(value);
}
