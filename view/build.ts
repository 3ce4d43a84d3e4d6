/**
 * Bundles the object browser into one self-contained HTML page (script and
 * styles inline: a host loads it from a resource, with no server of its own
 * and no CDN). The server embeds the result when it is built
 * (src/object-browser-html.macro.ts); nothing is read from disk at run time.
 * The bundler runs as a child process (bundle.ts): a macro may not call
 * Bun.build while the bundler waits for it.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const HERE = import.meta.dir;

export function buildObjectBrowserHtml(): string {
  const built = Bun.spawnSync([process.execPath, resolve(HERE, "bundle.ts")], { stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(`the object browser did not build:\n${built.stderr.toString()}`);
  // Inline script: "</script" inside a string of the bundle would end the element early.
  const script = built.stdout.toString().replaceAll("</script", "<\\/script");
  const styles = readFileSync(resolve(HERE, "src/styles.css"), "utf8");
  const page = readFileSync(resolve(HERE, "src/index.html"), "utf8");
  // Functions as replacements: the bundle contains "$&"-like sequences a string replacement would expand.
  return page.replace("/*STYLES*/", () => styles).replace("/*SCRIPT*/", () => script);
}
