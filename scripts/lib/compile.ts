/** The one place the compile options live, shared by the local and release builds. */
import { duckdbEmbed } from "./duckdb-embed.ts";

export interface CompileOptions {
  outfile: string;
  /** A bun compile target such as "bun-linux-arm64"; the host when omitted. */
  target?: string;
}

export async function compile({ outfile, target }: CompileOptions): Promise<void> {
  const result = await Bun.build({
    entrypoints: ["./src/main.ts"],
    minify: true,
    // Bytecode halves the cold start; it needs ESM output (consola uses import.meta).
    bytecode: true,
    format: "esm",
    // Dynamic imports become chunks of their own inside the executable, loaded when first imported: without it the
    // whole bundle (the AWS SDK, the remote mode, the view) is loaded before main.ts runs — 10.5 ms → 2 ms to reach
    // it, spawn → tools/list answered ~56 → ~50 ms here (scripts/bench cold start).
    splitting: true,
    sourcemap: "none",
    // The query engine's native pair for this target, embedded (query_objects loads it on its first query).
    plugins: [duckdbEmbed(target)],
    compile: {
      outfile,
      ...(target ? { target: target as never } : {}),
      // An MCP client starts the server from arbitrary folders: never read their .env or bunfig.toml.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error(`compile failed for ${target ?? "host"}`);
  }
}
