/**
 * Whether an object key can become a file below the download directory. A key
 * is any string; a file name is not. Refused, never written elsewhere: `.` and
 * `..` segments, absolute paths and empty segments (`a//b`), NUL and control
 * characters, names over the file system's limits, and on Windows the
 * reserved names (CON, NUL, COM1…) and characters (`<>:"\|?*`) and names
 * ending in a dot or space.
 */

/** Bytes a name may have on common file systems (ext4, APFS, NTFS in UTF-16 is close). */
const NAME_MAX = 255;
/** Bytes a relative path may add below the download directory. */
const PATH_MAX = 3000;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;
// Control characters, and DEL; a backslash is a separator on Windows.
const CONTROL = /[\u0000-\u001f\u007f]/;
const WINDOWS_CHARS = /[<>:"\\|?*]/;

/** Why `rel` (a key minus its prefix) cannot be a local path, or undefined when it can. */
export function unsafeLocalName(rel: string, platform: NodeJS.Platform = process.platform): string | undefined {
  if (rel === "") return "the key is the prefix itself";
  if (rel.startsWith("/")) return "an absolute path (starts with /)";
  if (CONTROL.test(rel)) return "NUL or control characters";
  if (Buffer.byteLength(rel) > PATH_MAX) return `longer than ${PATH_MAX} bytes`;
  const segments = rel.split("/");
  for (const segment of segments) {
    if (segment === "") return "an empty path segment (a//b, or a trailing /)";
    if (segment === "." || segment === "..") return `a "${segment}" segment`;
    if (Buffer.byteLength(segment) > NAME_MAX) return `a name longer than ${NAME_MAX} bytes`;
    if (platform === "win32") {
      if (WINDOWS_CHARS.test(segment)) return 'a character Windows does not allow in names (<>:"\\|?*)';
      if (WINDOWS_RESERVED.test(segment)) return `a name Windows reserves (${segment})`;
      if (/[. ]$/.test(segment)) return "a name ending in a dot or space (Windows drops them)";
    }
  }
  return undefined;
}

/**
 * Keys that are both a file and a folder (`a` and `a/b`) cannot both be
 * files: the first one met is kept, the other is refused. Listings come in
 * key order, so `a` is met before `a/b`; its folders are remembered so a
 * later `a` is refused too.
 */
export class FileFolderClash {
  readonly #files = new Set<string>();
  readonly #folders = new Set<string>();

  /** Why `rel` clashes with a path already taken, or undefined (and it is taken now). */
  claim(rel: string, fold: boolean): string | undefined {
    const norm = fold ? rel.toLowerCase() : rel;
    if (this.#folders.has(norm)) return `another key uses ${rel} as a folder`;
    const segments = norm.split("/");
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join("/");
      if (this.#files.has(folder)) return `the key of ${folder} is a file here, so it cannot be a folder`;
    }
    if (this.#files.has(norm))
      return fold ? "another key differs only in case (this file system ignores case)" : "a duplicate";
    this.#files.add(norm);
    for (let i = 1; i < segments.length; i++) this.#folders.add(segments.slice(0, i).join("/"));
    return undefined;
  }
}
