/** Runs test/clients/drive.mjs under Node 22 for one client library and returns what that library hands the model, per scenario. */

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { requireBinary } from "./mcp.ts";
import { tracked } from "./processes.ts";
import { s3Env } from "./s3.ts";

export const NODE22 = resolve(import.meta.dir, "../../.tools/node22/node_modules/node/bin/node");
const DRIVER = resolve(import.meta.dir, "../clients/drive.mjs");

export type Scenario = "text" | "image" | "binary" | "binaryBytes" | "truncated" | "download" | "error" | "nulls";
export type Outcome = { model?: any; thrown?: string };

export async function driveClient(
  client: string,
  bucket: string,
  dir: string,
  extra: { env?: Record<string, string>; options?: Record<string, unknown> } = {},
): Promise<Record<Scenario, Outcome> & { schema?: any }> {
  if (!existsSync(NODE22))
    throw new Error(`${NODE22} is missing: bash scripts/provision.sh test installs Node 22 from npm`);
  const proc = Bun.spawn(
    [
      NODE22,
      DRIVER,
      JSON.stringify({
        client,
        binary: requireBinary(),
        env: { ...s3Env(), ...extra.env },
        bucket,
        dir,
        options: extra.options,
      }),
    ],
    {
      cwd: resolve(import.meta.dir, "../.."),
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root" },
    },
  );
  tracked(proc);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${client} driver exited ${code}: ${err.slice(-3000)}`);
  return JSON.parse(out);
}
