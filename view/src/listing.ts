/** The listing table: buckets, or one page of folders and objects. */
import { h } from "./dom.ts";
import { type BucketRow, type Entry, formatSize, type Sort, type SortField } from "./model.ts";

export interface Listing {
  entries: Entry[];
  sort: Sort;
  /** Checkboxes for delete_objects, when the server offers it. */
  selectable: boolean;
  selected: ReadonlySet<string>;
  openFolder(prefix: string): void;
  openObject(entry: Entry): void;
  toggle(key: string, on: boolean): void;
  toggleAll(on: boolean): void;
  sortBy(field: SortField): void;
  when(iso: string | null | undefined): string;
}

export function renderBuckets(
  thead: HTMLElement,
  tbody: HTMLElement,
  buckets: BucketRow[],
  filter: string,
  open: (name: string) => void,
  when: Listing["when"],
): void {
  thead.replaceChildren(
    h("tr", {}, h("th", { scope: "col", text: "Bucket" }), h("th", { scope: "col", text: "Created" })),
  );
  const needle = filter.trim().toLowerCase();
  const shown = buckets.filter((b) => b.name.toLowerCase().includes(needle));
  tbody.replaceChildren(
    ...shown.map((b) =>
      h(
        "tr",
        {},
        h(
          "td",
          { class: "name" },
          h("button", { type: "button", class: "link", "data-row": "", onclick: () => open(b.name) }, b.name),
        ),
        h("td", { text: when(b.creation_date) }),
      ),
    ),
  );
  if (shown.length === 0) tbody.append(emptyRow(2, buckets.length ? "No bucket matches the filter." : "No buckets."));
}

export function renderEntries(thead: HTMLElement, tbody: HTMLElement, view: Listing): void {
  const sortable = (field: SortField, label: string, numeric = false) => {
    const active = view.sort.by === field;
    return h(
      "th",
      {
        scope: "col",
        class: numeric ? "num" : undefined,
        "aria-sort": active ? (view.sort.descending ? "descending" : "ascending") : "none",
      },
      h(
        "button",
        { type: "button", onclick: () => view.sortBy(field) },
        `${label}${active ? (view.sort.descending ? " ↓" : " ↑") : ""}`,
      ),
    );
  };
  const objects = view.entries.filter((e) => e.kind === "object");
  const allChecked = objects.length > 0 && objects.every((o) => view.selected.has(o.key));
  const selectAll =
    view.selectable &&
    h(
      "th",
      { class: "check" },
      h("input", {
        type: "checkbox",
        "aria-label": "Select every object on this page",
        checked: allChecked,
        onchange: (e: Event) => view.toggleAll((e.target as HTMLInputElement).checked),
      }),
    );
  thead.replaceChildren(
    h(
      "tr",
      {},
      selectAll,
      sortable("name", "Name"),
      sortable("size", "Size", true),
      sortable("modified", "Modified"),
      h("th", { scope: "col", text: "Class" }),
    ),
  );
  tbody.replaceChildren(...view.entries.map((entry) => row(entry, view)));
  if (view.entries.length === 0)
    tbody.append(emptyRow(view.selectable ? 5 : 4, "Nothing here (or nothing matches the filter)."));
}

function row(entry: Entry, view: Listing): HTMLTableRowElement {
  const isFolder = entry.kind === "folder";
  const selected = view.selected.has(entry.key);
  const check =
    view.selectable &&
    h(
      "td",
      { class: "check" },
      !isFolder &&
        h("input", {
          type: "checkbox",
          "aria-label": `Select ${entry.name}`,
          checked: selected,
          onchange: (e: Event) => view.toggle(entry.key, (e.target as HTMLInputElement).checked),
        }),
    );
  const open = () => (isFolder ? view.openFolder(entry.key) : view.openObject(entry));
  const name = h(
    "button",
    {
      type: "button",
      class: isFolder ? "link folder" : "link",
      "data-row": "",
      "aria-label": isFolder ? `Folder ${entry.name}` : undefined,
      onclick: open,
    },
    entry.name || "(empty name)",
  );
  return h(
    "tr",
    { "data-selected": selected },
    check,
    h("td", { class: "name" }, name),
    h("td", { class: "num", text: isFolder || entry.size === undefined ? "" : formatSize(entry.size) }),
    h("td", { text: isFolder ? "" : view.when(entry.modified) }),
    h("td", { text: entry.storageClass ?? "" }),
  );
}

function emptyRow(columns: number, text: string): HTMLTableRowElement {
  return h("tr", {}, h("td", { colspan: columns, class: "note", text }));
}

/** Arrow keys move between rows (each row's name button), Home/End to the first/last. */
export function moveFocus(tbody: HTMLElement, event: KeyboardEvent): void {
  const rows = [...tbody.querySelectorAll<HTMLButtonElement>("button[data-row]")];
  const at = rows.indexOf(document.activeElement as HTMLButtonElement);
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: rows.length - 1 }[event.key];
  if (to === undefined || rows.length === 0) return;
  event.preventDefault();
  rows[Math.min(rows.length - 1, Math.max(0, to))]?.focus();
}
