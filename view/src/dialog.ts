/** A modal confirmation: resolves true only when the person presses the confirming button (Cancel, Escape: false). */
import { byId, h } from "./dom.ts";

export function confirmWithPerson(title: string, body: (Node | string)[], confirmLabel: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>("confirm");
  const ok = byId<HTMLButtonElement>("confirm-ok");
  const cancel = byId<HTMLButtonElement>("confirm-cancel");
  byId("confirm-title").textContent = title;
  byId("confirm-body").replaceChildren(...body);
  ok.textContent = confirmLabel;
  return new Promise((resolve) => {
    const finish = (answer: boolean) => {
      ok.onclick = cancel.onclick = dialog.oncancel = null;
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    ok.onclick = () => finish(true);
    cancel.onclick = () => finish(false);
    dialog.oncancel = (event) => {
      event.preventDefault();
      finish(false);
    };
    dialog.showModal();
    cancel.focus(); // the safe choice is the default one
  });
}

/** A list of names for a dialog, and how many more there are. */
export function nameList(names: string[], more: number): Node[] {
  const list: Node[] = [h("ul", {}, ...names.map((n) => h("li", { text: n })))];
  if (more > 0) list.push(h("p", { text: `and ${more} more` }));
  return list;
}
