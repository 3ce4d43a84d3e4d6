/**
 * The object browser: an MCP App view. It starts from the list_buckets or
 * list_objects result the host hands over, and from then on calls the
 * server's own tools through the host (App.callServerTool) — never the store,
 * except for images and links through URLs the server presigned.
 */
import {
  App,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
  type McpUiHostContext,
} from "@modelcontextprotocol/ext-apps";
import { closeDetails, type DetailsDeps, showDetails } from "./details.ts";
import { confirmWithPerson, nameList } from "./dialog.ts";
import { byId, h } from "./dom.ts";
import { moveFocus, renderBuckets, renderEntries } from "./listing.ts";
import {
  type BucketRow,
  bucketsOf,
  crumbsOf,
  type Entry,
  entriesOf,
  filterEntries,
  formatDate,
  formatSize,
  type ListPage,
  listPageOf,
  namesToConfirm,
  PAGE_SIZE,
  parentOf,
  type Sort,
  sortEntries,
  type ToolResult,
  toBase64,
  UPLOAD_MAX_BYTES,
  usageBarsOf,
} from "./model.ts";
import { Server, ServerError } from "./server.ts";

const app = new App({ name: "store-mcp-server object browser", version: "1.0.0" }, {}, { autoResize: true });
const server = new Server(app);

const el = {
  crumbs: byId("crumbs"),
  filter: byId<HTMLInputElement>("filter"),
  refresh: byId<HTMLButtonElement>("refresh"),
  usage: byId<HTMLButtonElement>("usage"),
  upload: byId<HTMLButtonElement>("upload"),
  uploadFile: byId<HTMLInputElement>("upload-file"),
  remove: byId<HTMLButtonElement>("delete"),
  error: byId("error"),
  errorText: byId("error-text"),
  status: byId("status"),
  usagePanel: byId("usage-panel"),
  thead: byId("thead"),
  tbody: byId("tbody"),
  pager: byId("pager"),
  details: byId("details"),
  table: byId("table"),
};

/** What is on screen: the bucket list, or a page of one bucket at a prefix. */
const state = {
  buckets: undefined as BucketRow[] | undefined,
  bucket: undefined as string | undefined,
  prefix: "",
  page: undefined as ListPage | undefined,
  /** The arguments that made the page (the conversation's own, until the person navigates); their tokens page on. */
  listArgs: {} as Record<string, unknown>,
  /** The continuation token of each page so far (the first has none). */
  tokens: [undefined] as (string | undefined)[],
  sort: { by: "name", descending: false } as Sort,
  selected: new Set<string>(),
  context: {} as McpUiHostContext,
};

const when = (iso: string | null | undefined) => formatDate(iso, state.context.locale, state.context.timeZone);
function say(text: string): void {
  el.status.textContent = text;
}

function fail(err: unknown): void {
  const text =
    err instanceof ServerError
      ? err.message
      : `The host could not reach the server: ${err instanceof Error ? err.message : String(err)}`;
  el.errorText.textContent = text;
  el.error.hidden = false;
  say("");
}

const details: DetailsDeps = { app, server, panel: el.details, fail, say, when };

/** Runs one of the person's actions: errors shown in the view, the status line cleared of "Working…". */
async function act(work: () => Promise<void>): Promise<void> {
  el.error.hidden = true;
  try {
    await work();
  } catch (err) {
    fail(err);
  }
}

function render(): void {
  const inBucket = state.bucket !== undefined;
  el.crumbs.replaceChildren(
    ...crumbsOf(state.bucket, state.prefix).map((crumb, i, all) => {
      const last = i === all.length - 1;
      const go = () => void act(() => (crumb.prefix === undefined ? showBuckets() : openPrefix(crumb.prefix)));
      return h(
        "li",
        {},
        last
          ? h("span", { "aria-current": "location", text: crumb.label })
          : h("button", { type: "button", class: "link", onclick: go }, crumb.label),
      );
    }),
  );
  el.usage.hidden = !inBucket || !server.offers("storage_usage");
  el.upload.hidden = !inBucket || !server.offers("put_object");
  el.remove.hidden = !inBucket || !server.offers("delete_objects");
  el.remove.disabled = state.selected.size === 0;
  el.remove.textContent = state.selected.size ? `Delete (${state.selected.size})` : "Delete";
  el.table.setAttribute("aria-label", inBucket ? `Objects in ${state.bucket}/${state.prefix}` : "Buckets");
  if (!inBucket) {
    renderBuckets(
      el.thead,
      el.tbody,
      state.buckets ?? [],
      el.filter.value,
      (name) => void act(() => openBucket(name)),
      when,
    );
    el.pager.replaceChildren();
    return;
  }
  const entries = sortEntries(
    filterEntries(entriesOf(state.page ?? emptyPage(), state.prefix), el.filter.value),
    state.sort,
  );
  renderEntries(el.thead, el.tbody, {
    entries,
    sort: state.sort,
    selectable: server.offers("delete_objects"),
    selected: state.selected,
    openFolder: (prefix) => void act(() => openPrefix(prefix)),
    openObject: (entry: Entry) => void showDetails(details, state.bucket!, entry),
    toggle: (key, on) => {
      if (on) state.selected.add(key);
      else state.selected.delete(key);
      render();
    },
    toggleAll: (on) => {
      for (const e of entries) if (e.kind === "object") on ? state.selected.add(e.key) : state.selected.delete(e.key);
      render();
    },
    sortBy: (by) => {
      state.sort = { by, descending: state.sort.by === by ? !state.sort.descending : by !== "name" };
      render();
    },
    when,
  });
  renderPager();
}

function renderPager(): void {
  const page = state.page;
  const index = state.tokens.length;
  const prev = h(
    "button",
    { type: "button", disabled: index <= 1, onclick: () => void act(() => turnPage(-1)) },
    "Previous page",
  );
  const next = h(
    "button",
    { type: "button", disabled: !page?.is_truncated, onclick: () => void act(() => turnPage(1)) },
    "Next page",
  );
  const counts = page
    ? `Page ${index}: ${page.common_prefixes.length} folders, ${page.objects.length} objects${page.is_truncated ? ", more on the next page" : ""}`
    : "";
  el.pager.replaceChildren(prev, next, h("span", { text: counts }));
}

const emptyPage = (): ListPage => ({
  bucket: state.bucket ?? "",
  prefix: state.prefix,
  objects: [],
  common_prefixes: [],
  is_truncated: false,
  next_continuation_token: null,
});

async function showBuckets(): Promise<void> {
  say("Loading buckets…");
  showBucketList((await server.call("list_buckets", {})).structuredContent?.buckets as BucketRow[]);
}

function showBucketList(buckets: BucketRow[]): void {
  Object.assign(state, { buckets, bucket: undefined, prefix: "", page: undefined });
  leavePlace();
  say(`${buckets.length} buckets`);
  render();
}

const openBucket = (name: string) => openPrefix("", name);

/** Opens a folder level of the bucket: the view's own listing, one level at a time, PAGE_SIZE keys a page. */
async function openPrefix(prefix: string, bucket = state.bucket!): Promise<void> {
  const args = { bucket_name: bucket, prefix, delimiter: "/", max_keys: PAGE_SIZE };
  await loadPage(args, [undefined]);
}

async function loadPage(args: Record<string, unknown>, tokens: (string | undefined)[]): Promise<void> {
  say("Loading…");
  const token = tokens[tokens.length - 1];
  const result = await server.call("list_objects", { ...args, ...(token ? { continuation_token: token } : {}) });
  const page = listPageOf(result);
  if (!page) throw new ServerError("list_objects answered without a listing.");
  const moved = page.bucket !== state.bucket || (page.prefix ?? "") !== state.prefix;
  Object.assign(state, { listArgs: args, tokens, page, bucket: page.bucket, prefix: page.prefix ?? "" });
  if (moved) leavePlace();
  say("");
  render();
}

async function turnPage(step: 1 | -1): Promise<void> {
  const tokens =
    step === 1 ? [...state.tokens, state.page?.next_continuation_token ?? undefined] : state.tokens.slice(0, -1);
  await loadPage(state.listArgs, tokens);
}

/** Leaving a place: its selection, details, filter and usage go. */
function leavePlace(): void {
  state.selected.clear();
  el.filter.value = "";
  el.usagePanel.hidden = true;
  el.usage.setAttribute("aria-pressed", "false");
  closeDetails(details);
}

async function showUsage(): Promise<void> {
  if (!el.usagePanel.hidden) {
    el.usagePanel.hidden = true;
    el.usage.setAttribute("aria-pressed", "false");
    return;
  }
  say("Measuring…");
  const usage =
    (await server.call("storage_usage", { bucket_name: state.bucket, prefix: state.prefix, depth: 1 }))
      .structuredContent ?? {};
  const bars = usageBarsOf((usage.groups as { group: string; objects: number; bytes: number }[]) ?? [], state.prefix);
  const summary = bars.map((b) => `${b.label} ${formatSize(b.bytes)}`).join(", ");
  el.usagePanel.replaceChildren(
    h(
      "figure",
      { role: "img", "aria-label": `Storage used per folder: ${summary || "nothing"}` },
      ...bars.map((b) =>
        h(
          "div",
          { class: "bar-row" },
          h("span", { text: b.label }),
          h("div", { class: "track" }, h("div", { class: "fill", style: `width:${b.percent.toFixed(1)}%` })),
          h("span", {
            class: "note",
            text: `${formatSize(b.bytes)} · ${b.objects} object${b.objects === 1 ? "" : "s"}`,
          }),
        ),
      ),
    ),
  );
  if (bars.length === 0) el.usagePanel.append(h("p", { class: "note", text: "Nothing stored here." }));
  el.usagePanel.hidden = false;
  el.usage.setAttribute("aria-pressed", "true");
  say("");
}

async function upload(file: File): Promise<void> {
  if (file.size > UPLOAD_MAX_BYTES)
    throw new ServerError(
      `${file.name} is ${formatSize(file.size)}; the browser uploads at most ${formatSize(UPLOAD_MAX_BYTES)}.\nNext: ask the assistant to upload it with upload_file, or for a presigned PUT link (presign_url).`,
    );
  const key = state.prefix + file.name;
  const exists = state.page?.objects.some((o) => o.key === key) ?? false;
  if (
    exists &&
    !(await confirmWithPerson(
      `Replace ${file.name}?`,
      [`${state.bucket}/${key} exists; uploading replaces it.`],
      "Replace",
    ))
  )
    return say("Nothing uploaded.");
  say(`Uploading ${file.name}…`);
  const content = toBase64(new Uint8Array(await file.arrayBuffer()));
  await server.call("put_object", {
    bucket_name: state.bucket,
    object_key: key,
    content,
    encoding: "base64",
    ...(file.type ? { content_type: file.type } : {}),
    ...(exists ? {} : { if_absent: true }),
  });
  await loadPage(state.listArgs, state.tokens);
  say(`Uploaded ${key} (${formatSize(file.size)}).`);
}

async function deleteSelected(): Promise<void> {
  const keys = [...state.selected];
  const { names, more } = namesToConfirm(keys);
  const title = `Delete ${keys.length} object${keys.length === 1 ? "" : "s"} from ${state.bucket}?`;
  if (
    !(await confirmWithPerson(
      title,
      [h("p", { text: "This cannot be undone (unless the bucket keeps versions)." }), ...nameList(names, more)],
      "Delete",
    ))
  )
    return say("Nothing deleted.");
  say("Deleting…");
  const done =
    (await server.call("delete_objects", { bucket_name: state.bucket, keys, confirm: true })).structuredContent ?? {};
  const failed = (done.failed as { key: string; code: string; message: string }[]) ?? [];
  state.selected.clear();
  await loadPage(state.listArgs, state.tokens);
  say(`Deleted ${done.deleted_count ?? 0} object(s).`);
  if (failed.length)
    throw new ServerError(`Not deleted: ${failed.map((f) => `${f.key} (${f.code}: ${f.message})`).join("; ")}`);
}

/** A result the host handed over: the conversation's own list_buckets or list_objects call. */
function showResult(result: ToolResult): void {
  server.learn(result);
  if (result.isError) return fail(new ServerError(result.content?.map((c) => c.text).join("\n") ?? ""));
  const buckets = bucketsOf(result);
  if (buckets) return showBucketList(buckets);
  const page = listPageOf(result);
  if (!page) return;
  Object.assign(state, {
    page,
    bucket: page.bucket,
    prefix: page.prefix ?? "",
    tokens: [undefined],
    listArgs: { ...state.listArgs, bucket_name: page.bucket },
  });
  leavePlace();
  say("");
  render();
}

function applyContext(context: McpUiHostContext): void {
  state.context = { ...state.context, ...context };
  if (context.theme) applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
  if (context.styles?.css?.fonts) applyHostFonts(context.styles.css.fonts);
}

app.addEventListener("toolinput", ({ arguments: args }) => {
  if (typeof args?.store === "string") server.store = args.store;
  // The conversation's listing arguments: its continuation tokens page on with exactly these.
  const { store: _store, continuation_token: _token, ...listArgs } = args ?? {};
  state.listArgs = listArgs;
});
app.addEventListener("toolresult", (result) => showResult(result as ToolResult));
app.addEventListener("hostcontextchanged", (context) => applyContext(context));

el.filter.addEventListener("input", () => render());
el.refresh.addEventListener(
  "click",
  () => void act(() => (state.bucket === undefined ? showBuckets() : loadPage(state.listArgs, state.tokens))),
);
el.usage.addEventListener("click", () => void act(showUsage));
el.upload.addEventListener("click", () => el.uploadFile.click());
el.uploadFile.addEventListener("change", () => {
  const file = el.uploadFile.files?.[0];
  el.uploadFile.value = "";
  if (file) void act(() => upload(file));
});
el.remove.addEventListener("click", () => void act(deleteSelected));
byId("error-close").addEventListener("click", () => (el.error.hidden = true));
el.tbody.addEventListener("keydown", (event) => moveFocus(el.tbody, event));
document.addEventListener("keydown", (event) => {
  const typing = event.target instanceof HTMLInputElement && event.target.type !== "checkbox";
  if (event.key === "Escape" && !el.details.hidden) closeDetails(details);
  else if (event.key === "Backspace" && !typing && state.bucket !== undefined) {
    event.preventDefault();
    const up = parentOf(state.prefix);
    void act(() => (up === undefined ? showBuckets() : openPrefix(up)));
  } else if (event.key === "/" && !typing) {
    event.preventDefault();
    el.filter.focus();
  }
});

say("Waiting for the listing…");
render();
app.connect().then(
  () => applyContext(app.getHostContext() ?? {}),
  (err) => fail(err),
);
