/**
 * Listings for a caller whose grants cover only some prefixes under the one
 * asked for: the store is asked only for the granted prefixes (never for the
 * whole bucket, then filtered), and no marker the store made reaches the
 * caller. A store's continuation token or next_key_marker names a key
 * (Ceph RGW's token is the plain key, MinIO's the key in base64, every
 * store's next_key_marker the last key of its page), so passing one through
 * would name a hidden key with every page; a caller-supplied one would seek
 * anywhere in the bucket. Markers here are made by the server: the last
 * entry the caller was shown (or a granted prefix wholly listed), encoded,
 * and accepted back only when they lie within the caller's view.
 */
import { byteOrder } from "../bulk/listing.ts";
import { ActionableError } from "../runtime/errors.ts";
import {
  type ListObjectsRequest,
  type ObjectInfo,
  type ObjectPage,
  type Storage,
  stalledListing,
  type VersionInfo,
  type VersionsPage,
  type VersionsRequest,
} from "../storage/index.ts";

/** Store requests one page may make before it hands back a marker (many granted prefixes, most of them empty). */
const REQUESTS_PER_PAGE = 50;

/** A place the view opens under the requested prefix: a granted prefix to list, or (with a delimiter) a folder that leads to deeper grants. */
type Unit = { prefix: string } | { folder: string };
const unitName = (u: Unit) => ("prefix" in u ? u.prefix : u.folder);

/** The granted prefixes under `prefix` as places to list, in key order, none inside another. */
export function unitsUnder(prefix: string, delimiter: string | undefined, granted: readonly string[]): Unit[] {
  const outermost = granted.filter((g) => g.startsWith(prefix) && !granted.some((o) => o !== g && g.startsWith(o)));
  const units = new Map<string, Unit>();
  for (const g of new Set(outermost)) {
    const rest = g.slice(prefix.length);
    const at = delimiter ? rest.indexOf(delimiter) : -1;
    // A grant below the next delimiter shows as that folder; listing inside it is the caller's next call.
    if (at >= 0) {
      const folder = prefix + rest.slice(0, at + delimiter!.length);
      units.set(folder, { folder });
    } else units.set(g, { prefix: g });
  }
  return [...units.values()].sort((a, b) => byteOrder(unitName(a), unitName(b)));
}

/** Where a narrowed listing goes on: after key `k` (and, in a versions listing, its version `v`); with `all`, after everything starting with `k`. */
interface Position {
  k: string;
  all?: boolean;
  v?: string;
}

const MARKER = "pm1.";

function encodeMarker(p: Position): string {
  return MARKER + Buffer.from(JSON.stringify(p)).toString("base64url");
}

/** The position a marker stands for, checked against the view; a marker this server did not make, or one outside the view, is refused. */
function decodeMarker(marker: string, units: Unit[], resource: string, param: string): Position {
  let p: Position | undefined;
  if (marker.startsWith(MARKER)) {
    try {
      const raw = JSON.parse(Buffer.from(marker.slice(MARKER.length), "base64url").toString("utf8")) as Position;
      if (typeof raw.k === "string" && (raw.v === undefined || typeof raw.v === "string"))
        p = { k: raw.k, all: raw.all === true, ...(raw.v !== undefined ? { v: raw.v } : {}) };
    } catch {
      p = undefined;
    }
  }
  if (p && units.some((u) => p.k.startsWith(unitName(u)))) return p;
  throw new ActionableError({
    resource,
    code: "InvalidContinuationToken",
    message: `This ${param} was not made by this server for this listing: under the policy, a listing here pages only with the markers it hands out, within the prefixes the caller may see.`,
    hint: `call again without ${param} to start from the beginning, then pass on exactly the marker each page returns (with the same bucket, prefix and delimiter).`,
  });
}

/** Whether an entry named `name` comes after the position. */
const pending = (name: string, at: Position | undefined) =>
  !at || (byteOrder(name, at.k) > 0 && !(at.all && name.startsWith(at.k)));

/** How a granted prefix stands against the position: wholly done, to list from its start, or to list after the position inside it. */
function resumeIn(prefix: string, at: Position | undefined): "done" | "start" | "inside" {
  if (!at) return "start";
  if (at.all && prefix.startsWith(at.k)) return "done";
  if (at.k.startsWith(prefix)) return "inside";
  return byteOrder(prefix, at.k) > 0 ? "start" : "done";
}

/** One page of a listing confined to `units`, at most maxKeys entries, with a server-made marker when more may follow. */
export async function narrowedObjects(
  storage: Storage,
  req: ListObjectsRequest,
  units: Unit[],
  signal?: AbortSignal,
): Promise<ObjectPage> {
  const resource = `s3://${req.bucket}/${req.prefix ?? ""}`;
  const marker =
    req.continuationToken ?? (req.startAfter !== undefined ? encodeMarker({ k: req.startAfter }) : undefined);
  let at = marker ? decodeMarker(marker, units, resource, "continuation_token") : undefined;
  const objects: ObjectInfo[] = [];
  const folders: string[] = [];
  const full = () => objects.length + folders.length >= req.maxKeys;
  let requests = 0;
  for (const unit of units) {
    if (full() || requests >= REQUESTS_PER_PAGE) return page(objects, folders, true);
    if ("folder" in unit) {
      if (pending(unit.folder, at)) folders.push(unit.folder);
      continue;
    }
    const how = resumeIn(unit.prefix, at);
    if (how === "done") continue;
    let token: string | undefined;
    for (;;) {
      requests++;
      const got = await storage.listObjects(
        {
          bucket: req.bucket,
          prefix: unit.prefix,
          maxKeys: req.maxKeys - objects.length - folders.length,
          ...(req.delimiter ? { delimiter: req.delimiter } : {}),
          ...(token ? { continuationToken: token } : how === "inside" ? { startAfter: at!.k } : {}),
        },
        signal,
      );
      // A store that names the folder of the key it starts after: what was shown already is not shown again.
      objects.push(...got.objects.filter((o) => pending(o.key, at)));
      folders.push(...got.common_prefixes.filter((f) => pending(f, at)));
      if (!got.is_truncated) break;
      if (!got.next_continuation_token || got.next_continuation_token === token) throw stalledListing(resource);
      token = got.next_continuation_token;
      if (full() || requests >= REQUESTS_PER_PAGE) return page(objects, folders, true);
    }
    // This prefix is wholly listed: a page that ends here goes on after all of it.
    at = { k: unit.prefix, all: true };
    if (objects.length + folders.length === 0 && requests >= REQUESTS_PER_PAGE)
      return { ...page(objects, folders, false), is_truncated: true, next_continuation_token: encodeMarker(at) };
  }
  return page(objects, folders, false);
}

/** The page, in key order, its marker the last entry shown (a folder stands for everything under it). */
function page(objects: ObjectInfo[], folders: string[], more: boolean): ObjectPage {
  const lastObject = objects.at(-1)?.key;
  const lastFolder = [...folders].sort(byteOrder).at(-1);
  const last =
    lastObject === undefined
      ? lastFolder
      : lastFolder === undefined || byteOrder(lastObject, lastFolder) > 0
        ? lastObject
        : lastFolder;
  const position: Position | undefined =
    last === undefined ? undefined : last === lastFolder ? { k: last, all: true } : { k: last };
  const truncated = more && position !== undefined;
  return {
    objects,
    common_prefixes: folders.sort(byteOrder),
    is_truncated: truncated,
    next_continuation_token: truncated ? encodeMarker(position!) : null,
  };
}

/** One page of a versions listing confined to `units` (no delimiter). */
export async function narrowedVersions(
  storage: Storage,
  req: VersionsRequest,
  units: Unit[],
  signal?: AbortSignal,
): Promise<VersionsPage> {
  const resource = `s3://${req.bucket}/${req.prefix ?? ""}`;
  let at = req.keyMarker ? decodeMarker(req.keyMarker, units, resource, "key_marker") : undefined;
  const versions: VersionInfo[] = [];
  let requests = 0;
  const more = (): VersionsPage => {
    const last = versions.at(-1);
    const position = last ? { k: last.key, ...(last.version_id ? { v: last.version_id } : {}) } : at;
    return {
      versions,
      is_truncated: position !== undefined,
      next_key_marker: position ? encodeMarker(position) : null,
      next_version_id_marker: position?.v ?? null,
    };
  };
  for (const unit of units) {
    if (!("prefix" in unit)) continue;
    if (versions.length >= req.maxKeys || requests >= REQUESTS_PER_PAGE) return more();
    const how = resumeIn(unit.prefix, at);
    if (how === "done") continue;
    let markers: { keyMarker?: string; versionIdMarker?: string } =
      how === "inside" ? { keyMarker: at!.k, ...(at!.v ? { versionIdMarker: at!.v } : {}) } : {};
    for (;;) {
      requests++;
      const got = await storage.listObjectVersions(
        { bucket: req.bucket, prefix: unit.prefix, maxKeys: req.maxKeys - versions.length, ...markers },
        signal,
      );
      versions.push(...got.versions);
      if (!got.is_truncated) break;
      if (
        !got.next_key_marker ||
        (got.next_key_marker === markers.keyMarker &&
          (got.next_version_id_marker ?? undefined) === markers.versionIdMarker)
      )
        throw stalledListing(resource);
      markers = {
        keyMarker: got.next_key_marker,
        ...(got.next_version_id_marker ? { versionIdMarker: got.next_version_id_marker } : {}),
      };
      if (versions.length >= req.maxKeys || requests >= REQUESTS_PER_PAGE) return more();
    }
    at = { k: unit.prefix, all: true };
  }
  return { versions, is_truncated: false, next_key_marker: null, next_version_id_marker: null };
}
