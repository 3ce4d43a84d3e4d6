/**
 * The demo: starts the embedded in-memory S3 emulator (fauxqs), launches the
 * compiled binary over stdio with a real MCP client, and drives it through the
 * six spec tools, the object toolkit and the bulk tools, printing a transcript. Stops everything it started.
 *   bun run demo          (builds the binary first)
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startFauxqs } from "./s3/local-servers.ts";

const binary = resolve(import.meta.dir, "../dist/store-mcp-server");
const out = (line = "") => process.stdout.write(`${line}\n`);
const dim = (s: string) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);

// A 2x2 PNG, so read mode has a real image to return.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

const s3 = await startFauxqs();
const work = mkdtempSync(join(tmpdir(), "store-mcp-demo-"));
let client: Client | undefined;
try {
  writeFileSync(join(work, "notes.md"), "# Meeting notes\n\n- ship the S3 MCP server\n- measure cold start\n");
  writeFileSync(join(work, "metrics.json"), `${JSON.stringify({ cold_start_ms: 42, tools: 6 }, null, 2)}\n`);
  writeFileSync(join(work, "pixel.png"), PNG);
  writeFileSync(join(work, "archive.bin"), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256)));
  // A small site for the bulk tools: nested folders, and a symlink the walk must skip.
  const site: [string, string][] = [
    ["site/index.html", "<h1>Hello</h1>\n"],
    ["site/css/site.css", "body { margin: 0 }\n"],
    ["site/docs/guide.md", "# Guide\n"],
    ["site/docs/notes.log", "debug\n"],
  ];
  for (const [rel, body] of site) {
    mkdirSync(join(work, rel, ".."), { recursive: true });
    writeFileSync(join(work, rel), body);
  }
  symlinkSync("/etc/passwd", join(work, "site", "passwd-link"));

  out(bold(`store-mcp-server demo: in-memory S3 emulator at ${s3.endpoint}, local files in ${work}`));
  const transport = new StdioClientTransport({
    command: binary,
    args: ["--allowed-dir", work, "--allow-delete"],
    env: {
      PATH: process.env.PATH ?? "",
      STORE_ENDPOINT_URL: s3.endpoint,
      STORE_ACCESS_KEY_ID: s3.accessKeyId,
      STORE_SECRET_ACCESS_KEY: s3.secretAccessKey,
      STORE_REGION: s3.region,
    },
    stderr: "ignore",
  });
  client = new Client({ name: "store-mcp-demo", version: "1.0.0" });
  const started = performance.now();
  await client.connect(transport);
  const { tools } = await client.listTools();
  out(
    `connected in ${Math.round(performance.now() - started)} ms to ${client.getServerVersion()?.name} ${client.getServerVersion()?.version}; tools: ${tools.map((t) => t.name).join(", ")}`,
  );

  const bucket = "demo-bucket";
  const step = async (title: string, name: string, args: Record<string, unknown>) => {
    out();
    out(bold(`▶ ${title}`));
    out(dim(`  ${name} ${JSON.stringify(args)}`));
    const result = (await client!.callTool({ name, arguments: args })) as CallToolResult;
    for (const block of result.content) {
      if (block.type === "text") out(indent(block.text));
      else if (block.type === "image")
        out(indent(`[image ${block.mimeType}, ${Buffer.from(block.data, "base64").length} bytes]`));
      else if (block.type === "resource") out(indent(`[resource ${block.resource.uri} ${block.resource.mimeType}]`));
    }
    if (result.isError) out(indent("(isError: true; the server keeps serving)"));
    return result;
  };

  await step("Create a bucket", "create_bucket", { bucket_name: bucket });
  await step("List buckets", "list_buckets", {});
  await step("Upload a Markdown file (content type detected)", "upload_file", {
    local_file_path: "notes.md",
    bucket_name: bucket,
    object_key: "docs/notes.md",
  });
  await step("Upload JSON with a cache-control header", "upload_file", {
    local_file_path: "metrics.json",
    bucket_name: bucket,
    object_key: "docs/metrics.json",
    cache_control: "max-age=60",
  });
  await step("Upload an image", "upload_file", {
    local_file_path: "pixel.png",
    bucket_name: bucket,
    object_key: "images/pixel.png",
  });
  await step("Upload a binary file", "upload_file", {
    local_file_path: "archive.bin",
    bucket_name: bucket,
    object_key: "data/archive.bin",
  });
  await step('List objects under "docs/"', "list_objects", { bucket_name: bucket, prefix: "docs/" });
  await step('Browse like folders (delimiter "/")', "list_objects", { bucket_name: bucket, delimiter: "/" });
  await step("Read a text object", "get_object", { bucket_name: bucket, object_key: "docs/notes.md" });
  await step("Read only the first 20 bytes", "get_object", {
    bucket_name: bucket,
    object_key: "docs/metrics.json",
    max_content_size: 20,
  });
  await step("Read an image (returned as MCP image content)", "get_object", {
    bucket_name: bucket,
    object_key: "images/pixel.png",
  });
  const dl = await step("Download to a local file", "get_object", {
    bucket_name: bucket,
    object_key: "data/archive.bin",
    mode: "download",
    local_path: "downloads/archive.bin",
  });
  const same = readFileSync(join(work, "downloads/archive.bin")).equals(readFileSync(join(work, "archive.bin")));
  out(indent(`downloaded file identical to the original: ${same}`));
  await step("Download again without overwrite (refused, file untouched)", "get_object", {
    bucket_name: bucket,
    object_key: "data/archive.bin",
    mode: "download",
    local_path: "downloads/archive.bin",
  });
  await step("A missing key gives an actionable error", "get_object", {
    bucket_name: bucket,
    object_key: "docs/missing.md",
  });
  await step("Write text the model produced (no local file)", "put_object", {
    bucket_name: bucket,
    object_key: "docs/summary.md",
    content: "# Summary\n\nAll six tools work.\n",
    metadata: { author: "demo" },
  });
  await step("Look at its metadata without reading it", "head_object", {
    bucket_name: bucket,
    object_key: "docs/summary.md",
  });
  await step("Search inside objects, like grep -r", "search_objects", {
    bucket_name: bucket,
    prefix: "docs/",
    pattern: "Summary",
  });
  await step("Write a small CSV", "put_object", {
    bucket_name: bucket,
    object_key: "data/sales.csv",
    content: "region,amount\nnorth,3\nsouth,5\nnorth,4\n",
  });
  await step("What a data file holds, without downloading it", "inspect_object", {
    bucket_name: bucket,
    object_key: "data/sales.csv",
  });
  const queried = await step("Query it with SQL", "query_objects", {
    bucket_name: bucket,
    keys: ["data/sales.csv"],
    sql: "SELECT region, sum(amount) AS total FROM objects GROUP BY region ORDER BY region",
  });
  await step("Copy it on the store (no bytes through the server)", "copy_object", {
    source_bucket: bucket,
    source_key: "docs/summary.md",
    bucket_name: bucket,
    object_key: "archive/summary.md",
  });
  await step("Write only if absent (refused: it exists)", "put_object", {
    bucket_name: bucket,
    object_key: "docs/summary.md",
    content: "overwrite?",
    if_absent: true,
  });
  const link = await step("Share a download link", "presign_url", {
    bucket_name: bucket,
    object_key: "archive/summary.md",
    expires_in: 600,
  });
  const fetched = await fetch((link.structuredContent as { url: string }).url);
  out(indent(`fetching the link without credentials: HTTP ${fetched.status}, ${JSON.stringify(await fetched.text())}`));
  await step("Read a text object in windows (offset)", "get_object", {
    bucket_name: bucket,
    object_key: "docs/notes.md",
    max_content_size: 24,
    offset: 24,
  });
  await step("Upload a whole folder (the symlink is skipped and reported)", "upload_directory", {
    local_dir: "site",
    bucket_name: bucket,
    prefix: "site/v1",
    exclude: ["*.log"],
  });
  await step("Upload it again: nothing changed, nothing sent", "upload_directory", {
    local_dir: "site",
    bucket_name: bucket,
    prefix: "site/v1",
    exclude: ["*.log"],
  });
  await step("How much space each folder uses", "storage_usage", { bucket_name: bucket });
  await step("Find objects by name", "find_objects", { bucket_name: bucket, glob: "*.md" });
  await step("Copy the folder on the store", "copy_prefix", {
    source_bucket: bucket,
    source_prefix: "site/v1",
    bucket_name: bucket,
    prefix: "site/v2",
  });
  await step("Download a prefix into a local folder", "download_prefix", {
    bucket_name: bucket,
    prefix: "site/v2",
    local_dir: "mirror",
  });
  await step("Delete many objects: a dry run first", "delete_objects", { bucket_name: bucket, prefix: "archive/" });
  await step("Delete them (confirmed)", "delete_objects", { bucket_name: bucket, prefix: "archive/", confirm: true });
  await step("Delete a bucket that still holds objects (refused)", "delete_bucket", { bucket_name: bucket });
  await step("Create an empty bucket", "create_bucket", { bucket_name: "scratch-bucket" });
  await step("Delete the empty bucket", "delete_bucket", { bucket_name: "scratch-bucket" });
  out();
  const failed = dl.isError || !same || queried.isError;
  out(
    bold(
      failed
        ? "Demo finished with a problem (see above)."
        : "Demo finished: the tools exercised through the compiled binary over stdio.",
    ),
  );
  if (failed) process.exitCode = 1;
} finally {
  await client?.close().catch(() => {});
  await s3.stop();
  rmSync(work, { recursive: true, force: true });
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}
