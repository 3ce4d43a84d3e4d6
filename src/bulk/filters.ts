/**
 * include/exclude glob lists, matched on a path relative to the job's root
 * (`/` separators): `*` and `?` stay within one name, `**` crosses folders,
 * `{a,b}` and `[ab]` as in a shell. A pattern without `/` matches the last
 * name anywhere (`*.log`), as rclone and .gitignore do; one with `/` matches
 * the whole relative path (`build/**`).
 */
import { z } from "zod";

const globs = z.array(z.string().min(1, "a glob must not be empty").max(1024)).max(100);
/** include: what a glob matches is said once; exclude refers to it. */
export const globList = (what: string) => globs.describe(`Globs below the ${what}: ["*.log"].`);
export const excludeList = globs.describe("Globs to leave out.");

export type PathFilter = (rel: string) => boolean;

function matcher(pattern: string): PathFilter {
  const glob = new Bun.Glob(pattern);
  if (pattern.includes("/")) return (rel) => glob.match(rel);
  return (rel) => glob.match(rel.slice(rel.lastIndexOf("/") + 1));
}

/** Whether a relative path is in the job: some include matches (or none given), and no exclude does. */
export function pathFilter(include: string[] | undefined, exclude: string[] | undefined): PathFilter {
  const inc = (include ?? []).map(matcher);
  const exc = (exclude ?? []).map(matcher);
  return (rel) => (inc.length === 0 || inc.some((m) => m(rel))) && !exc.some((m) => m(rel));
}
