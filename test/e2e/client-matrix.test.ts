/**
 * The client matrix: the compiled server driven through the real MCP client
 * libraries people build agents with (installed from npm at pinned versions,
 * run under Node 22 by test/clients/drive.mjs), asserting what each library
 * finally hands to the model — its own tool-result conversion — for a text
 * read, an image, binary, a truncated read, a download and an error. The
 * README's Clients table states these results.
 */

import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { driveClient } from "../helpers/client-matrix.ts";
import { tempDir } from "../helpers/files.ts";
import { freshBucket, sdkClient } from "../helpers/s3.ts";

const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const TEXT = "The quick brown fox reads from S3.\n";
const WINDOW = "0123456789".repeat(10);
let bucket: string;
let dir: string;

beforeAll(async () => {
  bucket = await freshBucket("clients");
  dir = tempDir("clients");
  mkdirSync(join(dir, "down"));
  const put = (Key: string, Body: string | Uint8Array, ContentType: string) =>
    sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ContentType }));
  await put("notes.txt", TEXT, "text/plain");
  await put("dot.png", Buffer.from(PNG_BASE64, "base64"), "image/png");
  await put("blob.bin", Uint8Array.from([0, 1, 2, 3, 255, 254]), "application/octet-stream");
  await put("long.txt", "0123456789".repeat(50), "text/plain");
}, 60_000);

const json = (v: unknown) => JSON.stringify(v);
/** blob.bin's bytes as base64: what must not reach a model unasked. */
const BLOB_BASE64 = "AAECA//+";

describe("Vercel AI SDK (@ai-sdk/mcp 2.0.99)", () => {
  test("automatic schemas: text and the image reach the model as text and a file part; errors as text", async () => {
    const r = await driveClient("ai-sdk", bucket, dir);
    expect(r.text.model).toMatchObject({ type: "content", value: [{ type: "text", text: TEXT }, { type: "text" }] });
    expect(r.image.model.value[0]).toEqual({
      type: "file",
      mediaType: "image/png",
      data: { type: "data", data: PNG_BASE64 },
    });
    expect(json(r.binary.model)).toContain("6 bytes, application/octet-stream");
    // Binary bytes only when asked: this client would put them into the model's context as base64 text.
    expect(json(r.binary.model)).not.toContain(BLOB_BASE64);
    expect(json(r.binaryBytes.model)).toContain(BLOB_BASE64);
    expect(r.truncated.model.value[0]).toEqual({ type: "text", text: WINDOW });
    expect(r.truncated.model.value[1].text).toContain("TRUNCATED: bytes 0-99 shown; call again with offset 100");
    expect(r.download.model.value[0].text).toContain("Saved s3://");
    expect(r.error.model.value[0].text).toContain("NoSuchKey, HTTP 404");
    expect(r.error.model.value[0].text).toContain("Next:");
  }, 120_000);

  test("explicit outputSchema (execute returns structuredContent only): the text still reaches the model", async () => {
    const r = await driveClient("ai-sdk-schemas", bucket, dir);
    expect(r.text.model).toMatchObject({ type: "json", value: { key: "notes.txt", text: TEXT } });
    expect(r.truncated.model.value).toMatchObject({ text: WINDOW, truncated: true, next_offset: 100 });
    expect(r.download.model.value).toMatchObject({ mode: "download", bytes: TEXT.length });
    // What the server cannot prevent: this mode hands the model structuredContent, which carries no image.
    expect(r.image.model.value).toMatchObject({ content_type: "image/png", encoding: "base64" });
    expect(json(r.image.model)).not.toContain(PNG_BASE64);
    expect(json(r.error.model)).toContain("NoSuchKey");
  }, 120_000);
});

describe("LangChain (@langchain/mcp-adapters 1.1.4) with its OpenAI and Anthropic chat models' message conversion", () => {
  test("text and image convert for both providers; binary and downloads as their summary; errors carry our text", async () => {
    const r = await driveClient("langchain", bucket, dir, {
      options: { outputHandling: { resource_link: "artifact" } },
    });
    for (const provider of ["openai", "anthropic"] as const) {
      expect(json(r.text.model.providers[provider]), provider).toContain(JSON.stringify(TEXT).slice(1, -1));
      expect(json(r.truncated.model.providers[provider]), provider).toContain(WINDOW);
      expect(r.truncated.model.providers[provider].error, provider).toBeUndefined();
    }
    expect(r.image.model.providers.openai.content[0]).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${PNG_BASE64}` },
    });
    expect(r.image.model.providers.anthropic.content[0].content[0]).toEqual({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG_BASE64 },
    });
    // By default no bytes at all; asked for, embedded binary goes to the artifact (LangChain's default): the model gets the summary.
    expect(json(r.binary.model.content)).toContain("6 bytes, application/octet-stream");
    expect(json(r.binary.model)).not.toContain(BLOB_BASE64);
    expect(json(r.binaryBytes.model.content)).not.toContain(BLOB_BASE64);
    expect(json(r.binaryBytes.model.artifact)).toContain(BLOB_BASE64);
    expect(json(r.download.model.content)).toContain("Saved s3://");
    expect(r.error.thrown).toContain("NoSuchKey, HTTP 404");
  }, 120_000);

  test("by default (no resource_link) LangChain's chat models take every result; with STORE_RESOURCE_LINKS=true and no setting, it turns a link into a URL file block they refuse", async () => {
    const plain = await driveClient("langchain", bucket, dir);
    for (const provider of ["openai", "anthropic"] as const)
      expect(json(plain.truncated.model.providers[provider])).toContain(WINDOW);
    const links = await driveClient("langchain", bucket, dir, { env: { STORE_RESOURCE_LINKS: "true" } });
    expect(links.truncated.model.providers.openai.error).toContain("URL file blocks");
  }, 120_000);
});

describe("Mastra (@mastra/mcp 2.0.0)", () => {
  test("text, truncation, downloads and errors reach the model as text", async () => {
    const r = await driveClient("mastra", bucket, dir);
    expect(r.text.model).toEqual({ type: "text", value: expect.stringContaining(TEXT.trim()) });
    expect(r.truncated.model.value).toContain(WINDOW);
    expect(r.truncated.model.value).toContain("TRUNCATED");
    expect(r.download.model.value).toContain("Saved s3://");
    expect(r.error.thrown).toContain("NoSuchKey, HTTP 404");
    // What the server cannot prevent: for tools with an outputSchema Mastra passes only text blocks; the summary says what the object is.
    expect(r.image.model).toEqual({ type: "text", value: expect.stringContaining("image/png") });
    expect(r.binary.model).toEqual({ type: "text", value: expect.stringContaining("application/octet-stream") });
  }, 120_000);
});

describe("OpenAI Agents SDK (@openai/agents 0.20.0, MCPServerStdio)", () => {
  test("text and image reach the model as input_text and input_image; strict-mode nulls are accepted", async () => {
    const r = await driveClient("openai-agents", bucket, dir);
    expect(r.text.model).toEqual([
      { type: "input_text", text: TEXT },
      { type: "input_text", text: expect.stringContaining("text/plain") },
    ]);
    expect(r.image.model[0]).toEqual({ type: "input_image", image: `data:image/png;base64,${PNG_BASE64}` });
    expect(json(r.binary.model)).toContain("6 bytes, application/octet-stream");
    expect(json(r.binary.model)).not.toContain(BLOB_BASE64);
    expect(json(r.truncated.model)).toContain(WINDOW);
    expect(json(r.download.model)).toContain("Saved s3://");
    expect(json(r.error.model)).toContain("NoSuchKey, HTTP 404");
    // Strict mode makes every optional parameter required and nullable, and the model then sends null for it.
    expect(r.schema.required).toContain("max_content_size");
    expect(r.nulls.model).toEqual([{ type: "input_text", text: TEXT }, expect.anything()]);
  }, 120_000);
});
