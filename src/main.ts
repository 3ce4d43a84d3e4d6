#!/usr/bin/env bun
/**
 * The compile entry. `--version` is answered before anything else is loaded:
 * evaluating the CLI's modules (citty, the configuration, the MCP server and
 * its tool list) is most of a start, and a version check needs none of it.
 * Everything else goes to startup/cli.ts.
 */
import pkg from "../package.json" with { type: "json" };

const first = process.argv[2];
if ((first === "--version" || first === "-v") && process.argv.length === 3) {
  process.stdout.write(`${pkg.version}\n`);
} else if (first === "__query-worker") {
  // A query worker (content/query/engine-process.ts): the engine and nothing of the server.
  const { workerMain } = await import("./content/query/worker-main.ts");
  await workerMain(Number(process.argv[3]) || 320 * 1024 * 1024);
} else {
  await import("./startup/cli.ts");
}
