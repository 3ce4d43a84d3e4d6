/** The panel beside the listing: one object's metadata, its preview, and links (each only when the server offers its tool). */
import type { App } from "@modelcontextprotocol/ext-apps";
import { h } from "./dom.ts";
import {
  attachmentOf,
  type Entry,
  formatSize,
  INLINE_IMAGE_MAX_BYTES,
  previewKind,
  TEXT_PREVIEW_BYTES,
} from "./model.ts";
import type { Server } from "./server.ts";

export interface DetailsDeps {
  app: App;
  server: Server;
  panel: HTMLElement;
  fail(err: unknown): void;
  say(text: string): void;
  when(iso: string | null | undefined): string;
}

interface Meta {
  content_type?: string | null;
  size?: number | null;
  etag?: string | null;
  last_modified?: string | null;
  version_id?: string | null;
  storage_class?: string | null;
  cache_control?: string | null;
  metadata?: Record<string, string>;
}

const EXPIRIES: [number, string][] = [
  [3600, "1 hour"],
  [86400, "1 day"],
  [604800, "7 days"],
];

/** Which object the panel shows: an answer for another one (the person clicked on) is dropped. */
let shown: string | undefined;

export function closeDetails(deps: Pick<DetailsDeps, "panel">): void {
  shown = undefined;
  deps.panel.hidden = true;
  deps.panel.replaceChildren();
}

export async function showDetails(deps: DetailsDeps, bucket: string, entry: Entry): Promise<void> {
  const { panel, server } = deps;
  const key = entry.key;
  shown = `${bucket}/${key}`;
  const mine = shown;
  panel.hidden = false;
  const close = h("button", { type: "button", "aria-label": "Close details", onclick: () => closeDetails(deps) }, "×");
  panel.replaceChildren(
    h("div", { class: "row" }, h("h2", { text: entry.name }), close),
    h("p", { class: "note", text: "Loading…" }),
  );
  let meta: Meta = { size: entry.size, last_modified: entry.modified, storage_class: entry.storageClass };
  if (server.offers("head_object")) {
    try {
      meta = (await server.call("head_object", { bucket_name: bucket, object_key: key })).structuredContent as Meta;
    } catch (err) {
      deps.fail(err);
    }
  }
  if (shown !== mine) return;
  const preview = h("div", { class: "preview", "aria-label": "Preview", "aria-live": "polite" });
  panel.replaceChildren(
    h("div", { class: "row" }, h("h2", { text: entry.name }), close),
    preview,
    metadataList(meta, deps),
    actions(deps, bucket, key),
  );
  await renderPreview(deps, bucket, key, meta, preview).catch((err) => {
    if (shown !== mine) return;
    preview.replaceChildren(h("p", { class: "note", text: "No preview." }));
    deps.fail(err);
  });
}

function metadataList(meta: Meta, deps: DetailsDeps): HTMLElement {
  const rows: [string, string | null | undefined][] = [
    ["Type", meta.content_type],
    ["Size", meta.size == null ? undefined : `${formatSize(meta.size)} (${meta.size.toLocaleString("en")} bytes)`],
    ["Modified", deps.when(meta.last_modified)],
    ["ETag", meta.etag],
    ["Version", meta.version_id],
    ["Storage class", meta.storage_class],
    ["Cache-Control", meta.cache_control],
    ...Object.entries(meta.metadata ?? {}).map(([name, value]): [string, string] => [name, value]),
  ];
  const dl = h("dl", { "aria-label": "Metadata" });
  for (const [name, value] of rows) if (value) dl.append(h("dt", { text: name }), h("dd", { text: value }));
  return dl;
}

async function renderPreview(
  deps: DetailsDeps,
  bucket: string,
  key: string,
  meta: Meta,
  box: HTMLElement,
): Promise<void> {
  const { server } = deps;
  const size = meta.size ?? 0;
  const kind = previewKind(meta.content_type, key);
  const note = (text: string) => box.replaceChildren(h("p", { class: "note", text }));
  if (kind === "image") {
    const img = h("img", { alt: `Preview of ${key}` });
    // Inline (base64 through the host) where a presigned URL cannot be shown: no presign_url, or the host's CSP blocks the store's origin.
    const inline = async () => {
      if (!server.offers("get_object") || size > INLINE_IMAGE_MAX_BYTES)
        return note("No preview: the image cannot be shown here.");
      const read = await server.call("get_object", {
        bucket_name: bucket,
        object_key: key,
        max_content_size: Math.max(1, size),
      });
      const block = read.content?.find((c) => c.type === "image" && c.data);
      if (!block) return note("No preview for this image type.");
      img.src = `data:${block.mimeType};base64,${block.data}`;
    };
    box.replaceChildren(img);
    if (server.offers("presign_url")) {
      const signed = await server.call("presign_url", { bucket_name: bucket, object_key: key, expires_in: 900 });
      img.addEventListener("error", () => void inline().catch(deps.fail), { once: true });
      img.src = String(signed.structuredContent?.url);
    } else await inline();
    return;
  }
  if (kind === "text" && server.offers("get_object")) {
    const read = await server.call("get_object", {
      bucket_name: bucket,
      object_key: key,
      max_content_size: TEXT_PREVIEW_BYTES,
    });
    const s = read.structuredContent ?? {};
    if (typeof s.text !== "string") return note("No text preview: the object is not text.");
    const cut =
      s.truncated === true
        ? `Showing the first ${formatSize(TEXT_PREVIEW_BYTES)} of ${formatSize(Number(s.size))}.`
        : "";
    box.replaceChildren(
      h("pre", { tabindex: 0, "aria-label": `Text of ${key}`, text: s.text }),
      cut && h("p", { class: "note", text: cut }),
    );
    return;
  }
  // A data file or an archive (Parquet, zip, a gzip'd CSV…): what inspect_object says it holds, from the bytes it needs.
  if (server.offers("inspect_object")) {
    const inspected = await server.call("inspect_object", { bucket_name: bucket, object_key: key });
    const summary = inspected.isError ? undefined : inspected.content?.find((c) => c.type === "text" && c.text)?.text;
    if (summary) {
      box.replaceChildren(
        h("p", { class: "note", text: "What the file holds:" }),
        h("pre", { tabindex: 0, "aria-label": `Summary of ${key}`, text: summary }),
      );
      return;
    }
  }
  note(`No preview for ${meta.content_type || "this type"}; the metadata is below.`);
}

function actions(deps: DetailsDeps, bucket: string, key: string): HTMLElement {
  const { server, app } = deps;
  const box = h("div", { class: "actions" });
  if (!server.offers("presign_url")) return box;
  const expiry = h(
    "select",
    { "aria-label": "Link valid for" },
    ...EXPIRIES.map(([seconds, label]) => h("option", { value: seconds, text: label })),
  );
  const output = h("div", { class: "row" });
  const share = async () => {
    const signed =
      (await server.call("presign_url", { bucket_name: bucket, object_key: key, expires_in: Number(expiry.value) }))
        .structuredContent ?? {};
    const url = String(signed.url);
    const field = h("input", { type: "text", readonly: true, value: url, "aria-label": "Share link" });
    const copy = h(
      "button",
      {
        type: "button",
        onclick: () =>
          void copyText(url, field).then((done) => deps.say(done ? "Link copied." : "Select the link and copy it.")),
      },
      "Copy",
    );
    output.replaceChildren(
      field,
      copy,
      h("span", { class: "note", text: `valid until ${deps.when(String(signed.expires_at))}` }),
    );
    field.select();
  };
  const download = async () => {
    const signed =
      (
        await server.call("presign_url", {
          bucket_name: bucket,
          object_key: key,
          expires_in: 900,
          response_content_disposition: attachmentOf(key),
        })
      ).structuredContent ?? {};
    const url = String(signed.url);
    const opened = await app.openLink({ url }).catch(() => ({ isError: true }));
    // A host that will not open links: the link itself, for the person to open.
    if (opened.isError)
      output.replaceChildren(
        h("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: "Open the download link" }),
      );
  };
  box.append(
    h(
      "div",
      { class: "row" },
      h("span", { text: "Share link valid for" }),
      expiry,
      h("button", { type: "button", onclick: () => void share().catch(deps.fail) }, "Make share link"),
    ),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", onclick: () => void download().catch(deps.fail) }, "Download"),
    ),
    output,
  );
  return box;
}

/** The clipboard where the host's frame allows it; otherwise the field is selected for the person to copy. */
async function copyText(text: string, field: HTMLInputElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    field.select();
    return document.execCommand?.("copy") ?? false;
  }
}
