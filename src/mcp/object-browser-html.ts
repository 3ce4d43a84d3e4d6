/** The object browser's page, built with the binary (view/build.ts). Imported only when the view is read: the server starts without it. */
import { objectBrowserHtml } from "./object-browser-html.macro.ts" with { type: "macro" };

export const OBJECT_BROWSER_HTML: string = objectBrowserHtml();
