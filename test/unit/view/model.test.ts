/** The object browser's pure parts (view/src/model.ts): what it shows from tool results. */
import { expect, test } from "bun:test";
import { OFFERED_TOOLS_META } from "../../../src/mcp/object-browser.ts";
import {
  attachmentOf,
  crumbsOf,
  entriesOf,
  filterEntries,
  formatSize,
  type ListPage,
  namesToConfirm,
  offeredToolsOf,
  parentOf,
  previewKind,
  sortEntries,
  toBase64,
  usageBarsOf,
} from "../../../view/src/model.ts";

const page: ListPage = {
  bucket: "b",
  prefix: "logs/",
  objects: [
    { key: "logs/", size: 0, last_modified: null, etag: null, storage_class: null },
    { key: "logs/b.txt", size: 30, last_modified: "2026-01-02T00:00:00Z", etag: null, storage_class: "STANDARD" },
    { key: "logs/A.txt", size: 10, last_modified: "2026-03-01T00:00:00Z", etag: null, storage_class: "STANDARD" },
  ],
  common_prefixes: ["logs/2026/", "logs/2025/"],
  is_truncated: false,
  next_continuation_token: null,
};

test("entries: folders and objects below the prefix, the folder's own marker left out; sorted folders first", () => {
  const entries = entriesOf(page, "logs/");
  expect(entries.map((e) => e.name)).toEqual(["2026/", "2025/", "b.txt", "A.txt"]);
  expect(sortEntries(entries, { by: "name", descending: false }).map((e) => e.name)).toEqual([
    "2025/",
    "2026/",
    "A.txt",
    "b.txt",
  ]);
  expect(sortEntries(entries, { by: "size", descending: true }).map((e) => e.name)).toEqual([
    "2025/",
    "2026/",
    "b.txt",
    "A.txt",
  ]);
  expect(sortEntries(entries, { by: "modified", descending: false }).map((e) => e.name)).toEqual([
    "2025/",
    "2026/",
    "b.txt",
    "A.txt",
  ]);
  expect(filterEntries(entries, " a.T ").map((e) => e.name)).toEqual(["A.txt"]);
});

test("breadcrumbs and the parent folder, empty segments included", () => {
  expect(crumbsOf(undefined, "")).toEqual([{ label: "Buckets" }]);
  expect(crumbsOf("b", "a/b/")).toEqual([
    { label: "Buckets" },
    { label: "b", prefix: "" },
    { label: "a", prefix: "a/" },
    { label: "b", prefix: "a/b/" },
  ]);
  expect(crumbsOf("b", "a//")[3]).toEqual({ label: "(empty)", prefix: "a//" });
  expect([parentOf(""), parentOf("a/"), parentOf("a/b/")]).toEqual([undefined, "", "a/"]);
});

test("previews by type, and by extension when the type says nothing", () => {
  expect(previewKind("image/png", "x")).toBe("image");
  expect(previewKind("text/csv; charset=utf-8", "x")).toBe("text");
  expect(previewKind("application/json", "x")).toBe("text");
  expect(previewKind(null, "a/chart.PNG")).toBe("image");
  expect(previewKind("application/octet-stream", "notes.md")).toBe("text");
  expect(previewKind("application/pdf", "a.txt")).toBe("none");
  expect(previewKind("application/octet-stream", "blob.bin")).toBe("none");
});

test("the offered tools come from the result's _meta under the key the server writes", () => {
  expect(offeredToolsOf({ _meta: { [OFFERED_TOOLS_META]: ["list_objects", "presign_url", 3] } })).toEqual(
    new Set(["list_objects", "presign_url"]),
  );
  expect(offeredToolsOf({})).toBeUndefined();
});

test("sizes, base64 of large files, delete dialog names, usage bars, attachment names", () => {
  expect([formatSize(0), formatSize(1023), formatSize(1536), formatSize(5 * 1024 ** 3)]).toEqual([
    "0 B",
    "1023 B",
    "1.5 KiB",
    "5.0 GiB",
  ]);
  const bytes = new Uint8Array(200_000).map((_, i) => i % 251);
  expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
  expect(namesToConfirm(Array.from({ length: 25 }, (_, i) => `k${i}`))).toMatchObject({ more: 5 });
  const bars = usageBarsOf(
    [
      { group: "p/a/", objects: 1, bytes: 50 },
      { group: "p/", objects: 2, bytes: 100 },
    ],
    "p/",
  );
  expect(bars.map((b) => [b.label, b.percent])).toEqual([
    ["(objects here)", 100],
    ["a/", 50],
  ]);
  expect(attachmentOf('dir/ré"port.pdf')).toBe(
    `attachment; filename="r__port.pdf"; filename*=UTF-8''r%C3%A9%22port.pdf`,
  );
});

test("the view's CSP names where presigned URLs point: an endpoint's origin and its bucket subdomains, every AWS host, no subdomains for an IP", async () => {
  const { presignOrigins } = await import("../../../src/mcp/object-browser.ts");
  expect(presignOrigins(["https://s3.example.com:9000/"])).toEqual([
    "https://s3.example.com:9000",
    "https://*.s3.example.com:9000",
  ]);
  expect(presignOrigins([undefined, "http://127.0.0.1:7480", "http://[::1]:7480"])).toEqual([
    "https://*.amazonaws.com",
    "http://127.0.0.1:7480",
    "http://[::1]:7480",
  ]);
});
