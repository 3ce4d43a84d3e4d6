/** The one place the compile options live, shared by the local and release builds. */
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
    sourcemap: "none",
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
