/** A date as the storage layer's results give it: ISO 8601, or null where the store sent none. */
export function iso(date: Date | undefined): string | null {
  return date ? date.toISOString() : null;
}
