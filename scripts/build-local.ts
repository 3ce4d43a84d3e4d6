/**
 * Builds dist/store-mcp-server for this machine: the same compile options as
 * the release build (scripts/build.ts), one target.
 */
import { compile } from "./lib/compile.ts";

const outfile = process.argv[2] ?? "dist/store-mcp-server";
const started = performance.now();
await compile({ outfile });
process.stderr.write(`built ${outfile} in ${Math.round(performance.now() - started)} ms\n`);
