/**
 * get_object and inspect_object on a file inside a zip, tar or tar.gz
 * object: the member's bytes as a window reader (get_object's read mode uses
 * the same windows, budgets and presentation as for a whole object), its
 * CRC-32 checked whenever a window holds the whole member, and the
 * archive's failures as errors a model can act on.
 */
import { crc32 } from "node:zlib";
import { type TarEntry, TarError } from "../content/formats/tar.ts";
import { type ZipEntry, ZipError } from "../content/formats/zip.ts";
import { eachMemberChunk, MemberNotFound, memberSource, objectSource } from "../content/source.ts";
import type { CheckedPath, WriteResult } from "../local/index.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import type { ObjectAddress, ObjectMeta, Storage } from "../storage/index.ts";
import type { ToolContext } from "./types.ts";

/** An archive's failures as errors the model can act on; anything else as it is. */
export function archiveError(err: unknown, where: string, member: string | undefined): unknown {
  if (err instanceof MemberNotFound)
    return new ActionableError({
      resource: `${where}!${member}`,
      code: "NoSuchMember",
      message: `${err.message}.`,
      hint: `call inspect_object on ${where} without archive_member to list its entries, and use one of their names.`,
    });
  if (err instanceof ZipError || err instanceof TarError)
    return new ActionableError({
      resource: member ? `${where}!${member}` : where,
      code: "UnreadableArchive",
      message: `${err.message}.`,
      hint: "check that the object is a complete zip or tar archive (inspect_object lists its entries; head_object shows its size).",
    });
  return err;
}

/** The archive's first bytes read at once (enough for a small zip's directory, or a tar's first members). */
const FIRST_READ = 64 * 1024;

/**
 * A reader of `max` bytes of the member from `offset`, shaped as the storage's readObjectHead (so the window code is the
 * object's own), and the member's facts.
 */
export async function memberReader(
  storage: Storage,
  addr: ObjectAddress,
  member: string,
  max: number,
  offset: number,
  signal: AbortSignal,
): Promise<Pick<Storage, "readObjectHead">> {
  const where = s3Uri(addr.bucket, addr.key);
  try {
    const object = await objectSource(storage, addr, signal, FIRST_READ);
    // A few bytes more than the window: a text window may be widened to hold one whole character.
    const src = await memberSource(object, member, max + 4, offset);
    const { lookup } = await import("mime-types");
    const entry = src.entry;
    const meta: ObjectMeta = {
      content_type: lookup(member) || null,
      size: src.size,
      etag: null,
      last_modified: entry.modified,
      version_id: object.meta.version_id,
    };
    return {
      readObjectHead: async (_addr, n, _signal, from = 0) => {
        if (from >= src.size && src.size > 0)
          throw new ActionableError({
            resource: `${where}!${member}`,
            code: "InvalidRange",
            status: 416,
            message: `offset ${from} is at or past the end of the member (${src.size} bytes).`,
            hint: "use a smaller offset; the previous window was the last when next_offset was null.",
          });
        const bytes = await src.read(from, Math.min(n, src.size - from));
        // The whole member in one window: its CRC-32 must hold (a damaged or altered archive is refused).
        if (
          "crc32" in entry &&
          from === 0 &&
          bytes.length === src.size &&
          crc32(bytes) >>> 0 !== (entry as ZipEntry).crc32 >>> 0
        )
          throw archiveError(new ZipError(`${member} fails its CRC-32 check: the archive is damaged`), where, member);
        return { meta, bytes };
      },
    };
  } catch (err) {
    throw archiveError(err, where, member);
  }
}

/** Saves the member to a checked local path: its bytes in order, a zip member's size and CRC-32 checked before the file is moved into place. */
export async function downloadMember(
  ctx: Pick<ToolContext, "storage" | "files" | "signal" | "call">,
  addr: ObjectAddress,
  member: string,
  target: CheckedPath,
  overwrite: boolean,
): Promise<{ written: WriteResult; meta: ObjectMeta }> {
  const where = s3Uri(addr.bucket, addr.key);
  try {
    const object = await objectSource(ctx.storage, addr, ctx.signal, FIRST_READ);
    let crc = 0;
    let bytes = 0;
    let entry: ZipEntry | TarEntry | undefined;
    const written = await ctx.files.writeDownload(
      target,
      {
        size: undefined,
        fill: async (write) => {
          try {
            entry = await eachMemberChunk(object, member, async (chunk) => {
              await write(bytes, [chunk]);
              bytes += chunk.length;
            });
          } catch (err) {
            // The archive's own failure (a member inflating past its declared size), not the local file's.
            throw archiveError(err, where, member);
          }
        },
        check: {
          update: (b) => void (crc = crc32(b, crc)),
          finish: () => {
            if (entry && "crc32" in entry && (crc >>> 0 !== entry.crc32 >>> 0 || bytes !== entry.size))
              throw archiveError(
                new ZipError(`${member} fails its CRC-32 check: the archive is damaged`),
                where,
                member,
              );
          },
        },
      },
      { overwrite, signal: ctx.signal, holder: ctx.call },
    );
    const { lookup } = await import("mime-types");
    return {
      written,
      meta: {
        content_type: lookup(member) || null,
        size: written.bytes,
        etag: null,
        last_modified: entry?.modified ?? null,
        version_id: object.meta.version_id,
      },
    };
  } catch (err) {
    throw archiveError(err, where, member);
  }
}
