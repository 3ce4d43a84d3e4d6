/**
 * Bundles the object browser's script (run by build.ts as a child process:
 * a macro may not call Bun.build itself) and writes it to stdout.
 *
 * ext-apps imports `Protocol` from @modelcontextprotocol/client, whose index
 * also loads the client's OAuth, transports and a JSON Schema validator; the
 * package declares no `sideEffects`, so the bundler keeps all of it (a
 * quarter of the page). The import is pointed at the one file of the
 * package's build that defines Protocol, found in its index's re-exports; if
 * that is ever not found, the whole index is bundled as before.
 */

import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { BunPlugin } from "bun";

const CLIENT = "@modelcontextprotocol/client";

function protocolOnly(): BunPlugin {
  return {
    name: "client-protocol-only",
    setup(build) {
      build.onResolve({ filter: /^@modelcontextprotocol\/client$/ }, (args) => {
        const index = Bun.resolveSync(CLIENT, args.resolveDir || dirname(args.importer));
        const found = /\b(\w+) as Protocol\b[^;]*?from\s*"(\.\/[^"]+)"/.exec(readFileSync(index, "utf8"));
        if (!found) return undefined;
        return { path: `protocol-only:${join(dirname(index), found[2]!)}:${found[1]}`, namespace: "protocol-only" };
      });
      build.onLoad({ filter: /.*/, namespace: "protocol-only" }, (args) => {
        const [, file, name] = /^protocol-only:(.*):(\w+)$/.exec(args.path)!;
        return { contents: `export { ${name} as Protocol } from ${JSON.stringify(file)};`, loader: "js" };
      });
    },
  };
}

const built = await Bun.build({
  entrypoints: [resolve(import.meta.dir, "src/main.ts")],
  target: "browser",
  format: "iife",
  minify: true,
  plugins: [protocolOnly()],
});
if (!built.success) {
  for (const log of built.logs) console.error(log);
  process.exit(1);
}
process.stdout.write(await built.outputs[0]!.text());
