/**
 * The arguments of a tool that name a bucket or a key it touches, found in
 * its input schema by the marks the shared fragments carry (schemas.ts):
 * the call wrapper checks them all against the store's bucket allowlist and
 * key rules before the call reserves memory, asks the user or runs. Read
 * once per schema.
 */
import type { z } from "zod";
import { ADDRESS_MARKS } from "./schemas.ts";

export type AddressRole = keyof typeof ADDRESS_MARKS;

/** Argument names by what they name; `list` ones hold an array of keys. */
export interface ToolAddresses {
  bucket: string[];
  key: string[];
  sourceBucket: string[];
  sourceKey: string[];
  /** Those of the above whose value is an array. */
  lists: string[];
}

type Def = {
  type?: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  checks?: unknown[];
  shape?: Record<string, z.ZodType>;
};
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** What one field's schema names (through optional, nullable, default and the like, and an array's element). */
function roleOf(schema: z.ZodType): { role: AddressRole; list: boolean } | undefined {
  let def = defOf(schema);
  let list = false;
  for (let depth = 0; depth < 8; depth++) {
    const inner =
      def.innerType ?? (def.type === "pipe" ? def.in : undefined) ?? (def.type === "array" ? def.element : undefined);
    const role = (Object.keys(ADDRESS_MARKS) as AddressRole[]).find((r) => def.checks?.includes(ADDRESS_MARKS[r]));
    if (role) return { role, list };
    if (!inner) return undefined;
    if (def.type === "array") list = true;
    def = defOf(inner);
  }
  return undefined;
}

const found = new WeakMap<object, ToolAddresses>();

export function addressesOf(inputSchema: z.ZodObject): ToolAddresses {
  const known = found.get(inputSchema);
  if (known) return known;
  const out: ToolAddresses = { bucket: [], key: [], sourceBucket: [], sourceKey: [], lists: [] };
  for (const [name, field] of Object.entries(inputSchema.shape as Record<string, z.ZodType>)) {
    const role = roleOf(field);
    if (!role) continue;
    out[role.role].push(name);
    if (role.list) out.lists.push(name);
  }
  found.set(inputSchema, out);
  return out;
}
