/// <reference lib="dom" />
/**
 * The object browser (MCP App) in a real browser: headless Chromium shows the
 * view from the compiled binary's ui:// resource in a sandboxed iframe with
 * the resource's CSP, through the official AppBridge (test/helpers/app-host.ts),
 * and a person's clicks become the binary's tool calls against Ceph.
 * Screenshots land in .tmp/screenshots/.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { CreateBucketCommand, DeleteBucketCommand, HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { type AppHost, startAppHost } from "../helpers/app-host.ts";
import { connectBinary } from "../helpers/mcp.ts";
import { pngOf } from "../helpers/png.ts";
import { freshBucket, keysUnder, s3Env, sdkClient, uniqueBucket } from "../helpers/s3.ts";

const TEXT = "Quarterly notes\nline two: <b>not markup</b>\n";
const IMAGE = { width: 37, height: 23 };
let bucket: string;
let session: Awaited<ReturnType<typeof connectBinary>>;
let host: AppHost;

beforeAll(async () => {
  bucket = await freshBucket("browser");
  const put = (Key: string, Body: string | Uint8Array, ContentType?: string, Metadata?: Record<string, string>) =>
    sdkClient().send(
      new PutObjectCommand({
        Bucket: bucket,
        Key,
        Body,
        ...(ContentType ? { ContentType } : {}),
        ...(Metadata ? { Metadata } : {}),
      }),
    );
  await put("docs/notes.txt", TEXT, "text/plain", { owner: "finance-team" });
  await put("docs/a.txt", "a", "text/plain");
  await put("docs/b.txt", "b", "text/plain");
  await put("docs/keep.txt", "keep", "text/plain");
  await put("img/chart.png", pngOf(IMAGE.width, IMAGE.height), "image/png");
  await put("readme.md", "# hello", "text/markdown");
  await put("data/sales.csv.gz", gzipSync("region,amount\nnorth,12\nsouth,7\n"), "application/gzip");
  for (let i = 0; i < 120; i++) await put(`many/item-${String(i).padStart(3, "0")}.log`, `line ${i}`, "text/plain");
  session = await connectBinary({ env: { ...s3Env(), STORE_ALLOW_DELETE: "true" } });
  host = await startAppHost(session.client);
}, 120_000);

afterAll(async () => {
  await host?.close();
  await session?.close();
});

const rowButton = (name: string) => host.view.getByRole("button", { name, exact: true });
const errorBox = () => host.view.getByRole("alert");

test("the view is a self-contained page within its budget, declared with the store's origin", async () => {
  expect(new TextEncoder().encode(host.html).length).toBeLessThanOrEqual(350 * 1024);
  expect(host.html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/); // no CDN, nothing fetched
  expect(host.csp).toContain(new URL(s3Env().STORE_ENDPOINT_URL!).origin);
});

test("list_buckets opens the browser; a bucket, a folder and paging through a large prefix", async () => {
  await host.open("list_buckets", {});
  await rowButton(bucket).click();
  // Waited for, not checked at once: the listing comes from a tool call the view makes (a loaded run took longer).
  await rowButton("Folder docs/").waitFor({ state: "visible" });
  await host.view.getByRole("button", { name: "Folder many/" }).click();
  await host.view.getByText("Page 1: 0 folders, 100 objects, more on the next page").waitFor();
  expect(await host.view.locator("tbody tr").count()).toBe(100);
  await host.screenshot("browser-page-1");
  await host.view.getByRole("button", { name: "Next page" }).click();
  await host.view.getByText("Page 2: 0 folders, 20 objects").waitFor();
  await rowButton("item-119.log").waitFor({ state: "visible" });
  await host.view.getByRole("button", { name: "Previous page" }).click();
  await host.view.getByText("Page 1: 0 folders, 100 objects, more on the next page").waitFor();
  // Sort within the page: a second click on Name sorts descending.
  await host.view.getByRole("button", { name: /^Name/ }).click();
  expect(await host.view.locator("tbody tr button[data-row]").first().textContent()).toBe("item-099.log");
  expect(await host.view.getByRole("columnheader", { name: /^Name/ }).getAttribute("aria-sort")).toBe("descending");
  // Filter within the page, and the breadcrumb back to the bucket.
  await host.view.getByRole("searchbox", { name: "Filter this page by name" }).fill("item-04");
  expect(await host.view.locator("tbody tr").count()).toBe(10);
  await host.view.getByRole("navigation", { name: "Breadcrumb" }).getByRole("button", { name: bucket }).click();
  await rowButton("readme.md").waitFor();
  expect(host.pageErrors).toEqual([]);
});

test("keyboard: arrows move between rows, Enter opens a folder, Backspace goes up", async () => {
  await host.open("list_objects", { bucket_name: bucket, delimiter: "/" });
  await rowButton("Folder docs/").focus();
  await host.page.keyboard.press("ArrowDown");
  expect(await host.frame().evaluate(() => document.activeElement?.textContent)).toBe("img/");
  await host.page.keyboard.press("ArrowUp");
  await host.page.keyboard.press("Enter");
  await rowButton("notes.txt").waitFor();
  await host.page.keyboard.press("Backspace");
  await rowButton("readme.md").waitFor();
});

test("previews: a text object's text, an image decoded at its size, and the metadata", async () => {
  await host.open("list_objects", { bucket_name: bucket, prefix: "docs/", delimiter: "/" });
  await rowButton("notes.txt").click();
  const details = host.view.getByRole("complementary", { name: "Object details" });
  const text = details.getByLabel("Text of docs/notes.txt");
  await text.waitFor();
  expect(await text.textContent()).toBe(TEXT);
  const metadata = details.getByLabel("Metadata");
  expect(await metadata.textContent()).toContain("text/plain");
  expect(await metadata.textContent()).toContain("finance-team");
  await host.screenshot("browser-text-preview");

  await host.open("list_objects", { bucket_name: bucket, prefix: "img/", delimiter: "/" });
  await rowButton("chart.png").click();
  const image = host.view.getByRole("img", { name: "Preview of img/chart.png" });
  await image.waitFor();
  const size = await host.frame().waitForFunction(() => {
    const img = document.querySelector<HTMLImageElement>(".preview img");
    return img?.complete && img.naturalWidth > 0
      ? { width: img.naturalWidth, height: img.naturalHeight, src: img.src }
      : undefined;
  });
  const decoded = (await size.jsonValue()) as { width: number; height: number; src: string };
  expect({ width: decoded.width, height: decoded.height }).toEqual(IMAGE);
  // Shown from the store through a presigned URL the server made (the CSP declares the store's origin).
  expect(decoded.src.startsWith(new URL(s3Env().STORE_ENDPOINT_URL!).origin)).toBe(true);
  expect(host.pageErrors).toEqual([]);
  await host.screenshot("browser-image-preview");
});

test("a data file with no text preview shows what inspect_object says it holds", async () => {
  await host.open("list_objects", { bucket_name: bucket, prefix: "data/", delimiter: "/" });
  await rowButton("sales.csv.gz").click();
  const summary = host.view
    .getByRole("complementary", { name: "Object details" })
    .getByLabel("Summary of data/sales.csv.gz");
  await summary.waitFor();
  const text = await summary.textContent();
  expect(text).toContain("csv");
  expect(text).toContain("region");
  expect(text).toContain("amount");
  expect(host.pageErrors).toEqual([]);
  await host.screenshot("browser-inspect-preview");
});

test("a share link (presign_url) that serves the object, and a download link the host is asked to open", async () => {
  await host.open("list_objects", { bucket_name: bucket, prefix: "docs/", delimiter: "/" });
  await rowButton("notes.txt").click();
  await host.view.getByLabel("Link valid for").selectOption({ label: "1 day" });
  await host.view.getByRole("button", { name: "Make share link" }).click();
  const link = host.view.getByRole("textbox", { name: "Share link" });
  await link.waitFor();
  const url = await link.inputValue();
  expect(new URL(url).searchParams.get("X-Amz-Expires")).toBe("86400");
  const shared = await fetch(url);
  expect(shared.status).toBe(200);
  expect(await shared.text()).toBe(TEXT);

  await host.view.getByRole("button", { name: "Download" }).click();
  await host.frame().waitForFunction(() => true);
  for (let i = 0; i < 50 && host.openedLinks.length === 0; i++) await Bun.sleep(100);
  const download = await fetch(host.openedLinks.at(-1)!);
  expect(download.headers.get("content-disposition")).toContain('attachment; filename="notes.txt"');
  expect(await download.text()).toBe(TEXT);
});

test("upload a small file from the person's machine: it is on the store", async () => {
  await host.open("list_objects", { bucket_name: bucket, prefix: "docs/", delimiter: "/" });
  await host.view.getByRole("button", { name: "Upload…" }).waitFor({ state: "visible" });
  await host.view
    .locator("#upload-file")
    .setInputFiles({ name: "from-browser.csv", mimeType: "text/csv", buffer: Buffer.from("a,b\n1,2\n") });
  await rowButton("from-browser.csv").waitFor();
  const head = await sdkClient().send(new HeadObjectCommand({ Bucket: bucket, Key: "docs/from-browser.csv" }));
  expect(head.ContentLength).toBe(8);
  expect(head.ContentType).toBe("text/csv");
});

test("delete two objects: the dialog names them; Cancel keeps them, Delete removes them", async () => {
  await host.open("list_objects", { bucket_name: bucket, prefix: "docs/", delimiter: "/" });
  await host.view.getByRole("checkbox", { name: "Select a.txt" }).check();
  await host.view.getByRole("checkbox", { name: "Select b.txt" }).check();
  await host.view.getByRole("button", { name: "Delete (2)" }).click();
  const dialog = host.view.getByRole("dialog");
  await dialog.waitFor();
  expect(await dialog.textContent()).toContain("docs/a.txt");
  expect(await dialog.textContent()).toContain("docs/b.txt");
  await host.screenshot("browser-delete-dialog");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await host.view.getByText("Nothing deleted.").waitFor();
  expect(await keysUnder(bucket, "docs/")).toContain("docs/a.txt");

  await host.view.getByRole("button", { name: "Delete (2)" }).click();
  await host.view.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await host.view.getByText("Deleted 2 object(s).").waitFor();
  const left = await keysUnder(bucket, "docs/");
  expect(left).not.toContain("docs/a.txt");
  expect(left).not.toContain("docs/b.txt");
  expect(left).toContain("docs/keep.txt");
  expect(await rowButton("a.txt").count()).toBe(0);
});

test("a server error is shown in the view with its advice", async () => {
  const gone = uniqueBucket("browser-gone");
  await sdkClient().send(new CreateBucketCommand({ Bucket: gone }));
  await host.open("list_buckets", {});
  await sdkClient().send(new DeleteBucketCommand({ Bucket: gone }));
  await rowButton(gone).click();
  await errorBox().waitFor();
  const text = await errorBox().textContent();
  expect(text).toContain("NoSuchBucket");
  expect(text).toContain("Next:");
  await host.screenshot("browser-error");
});

test("storage usage per folder as bars", async () => {
  await host.open("list_objects", { bucket_name: bucket, delimiter: "/" });
  await host.view.getByRole("button", { name: "Usage" }).click();
  const figure = host.view.getByRole("img", { name: /^Storage used per folder:/ });
  await figure.waitFor();
  expect(await figure.getAttribute("aria-label")).toContain("many/");
  expect(await host.view.locator(".usage .fill").count()).toBeGreaterThanOrEqual(3);
  await host.screenshot("browser-usage");
});

test("follows the host's theme", async () => {
  await host.open("list_objects", { bucket_name: bucket, delimiter: "/" }, { theme: "dark" });
  const dark = await host.frame().evaluate(() => ({
    theme: document.documentElement.dataset.theme,
    background: getComputedStyle(document.documentElement).backgroundColor,
  }));
  expect(dark.theme).toBe("dark");
  await host.setHostContext({ theme: "light" });
  await host.frame().waitForFunction(() => document.documentElement.dataset.theme === "light");
  const light = await host.frame().evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  expect(light).not.toBe(dark.background);
  await host.setHostContext({ theme: "dark" });
  await host.screenshot("browser-dark");
});

test("a server that offers fewer tools gets fewer actions: read-only with three tools shows no upload, delete, usage or links, and images come inline", async () => {
  const narrow = await connectBinary({
    env: { ...s3Env(), STORE_READ_ONLY: "true" },
    args: ["--tools", "list_buckets,list_objects,get_object"],
  });
  const small = await startAppHost(narrow.client);
  try {
    await small.open("list_objects", { bucket_name: bucket, prefix: "img/", delimiter: "/" });
    await small.view.getByRole("button", { name: "chart.png", exact: true }).waitFor();
    for (const name of ["Upload…", "Usage"])
      expect(await small.view.getByRole("button", { name }).count(), name).toBe(0);
    expect(await small.view.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
    expect(await small.view.getByRole("checkbox").count()).toBe(0);
    await small.view.getByRole("button", { name: "chart.png", exact: true }).click();
    const decoded = await small.frame().waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>(".preview img");
      return img?.complete && img.naturalWidth > 0
        ? { width: img.naturalWidth, height: img.naturalHeight, inline: img.src.startsWith("data:image/png;base64,") }
        : undefined;
    });
    expect(await decoded.jsonValue()).toEqual({ ...IMAGE, inline: true });
    expect(await small.view.getByRole("button", { name: "Make share link" }).count()).toBe(0);
    expect(await small.view.getByRole("button", { name: "Download" }).count()).toBe(0);
    expect(small.pageErrors).toEqual([]);
  } finally {
    await small.close();
    await narrow.close();
  }
});
