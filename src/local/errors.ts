import { ActionableError, isAbortError } from "../runtime/errors.ts";

const TABLE: Record<string, [code: string, message: string, hint: string]> = {
  ENOENT: ["LocalFileNotFound", "No file exists at this path.", "check the path."],
  ELOOP: [
    "LocalSymlinkRefused",
    "The path is (or passes through) a symlink that is not followed, or a symlink loop.",
    "give the path of the real file.",
  ],
  ESWAPPED: [
    "LocalPathChanged",
    "A directory on the path was replaced while the server was using it; nothing was read or written through it.",
    "check the directory and call again.",
  ],
  EACCES: ["LocalAccessDenied", "The server is not permitted to DOING this path.", "choose another path."],
  EPERM: ["LocalAccessDenied", "The server is not permitted to DOING this path.", "choose another path."],
  EISDIR: ["LocalPathIsDirectory", "The path is a directory.", "give a file path."],
  ENOTDIR: ["InvalidLocalPath", "A part of the path is a file, not a directory.", "check the path."],
  ENOSPC: ["LocalDiskFull", "The disk is full; nothing was written.", "free space or choose another local_path."],
  EDQUOT: [
    "LocalDiskFull",
    "The disk quota is exhausted; nothing was written.",
    "free space or choose another local_path.",
  ],
  EROFS: ["LocalAccessDenied", "The file system is read-only.", "choose another local_path."],
  ENAMETOOLONG: [
    "InvalidLocalPath",
    "The path or one of its names is too long for the file system (255 bytes a name on most).",
    "use a shorter file name.",
  ],
  ENXIO: ["NotARegularFile", "The path is not a regular file.", "give the path of a regular file."],
};

/** A filesystem error as an ActionableError about `given`; domain and abort errors pass through. */
export function localError(given: string, err: unknown, doing: "read" | "write"): Error {
  if (err instanceof ActionableError || isAbortError(err)) return err as Error;
  const code = (err as NodeJS.ErrnoException).code ?? "";
  const [c, message, hint] = TABLE[code] ?? [
    "LocalIOError",
    `The file could not be ${doing === "read" ? "read" : "written"} (${code || "unknown error"}).`,
    "check the path and retry.",
  ];
  return new ActionableError({ resource: given, code: c, message: message.replace("DOING", doing), hint });
}
