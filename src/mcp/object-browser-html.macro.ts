/** Runs at build (and transpile) time: `import … with { type: "macro" }` inlines the object browser's page as a string literal. */
import { buildObjectBrowserHtml } from "../../view/build.ts";

export function objectBrowserHtml(): string {
  return buildObjectBrowserHtml();
}
