/**
 * MCP Bundles (.mcpb) for one-click installs in desktop clients: one bundle
 * per platform, holding that platform's binary and a manifest whose
 * user_config asks for the credentials (the secret marked sensitive), region,
 * endpoint, an allowed directory and read-only. Settings travel as STORE_*
 * variables: an empty optional field is then simply "not set" (an empty
 * --allowed-dir would be an error). Packed and checked with the official
 * @anthropic-ai/mcpb CLI.
 */
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };

const MCPB = resolve(import.meta.dir, "../../node_modules/.bin/mcpb");

/** The platform names bundles use, per release target. */
const PLATFORM: Record<string, "darwin" | "linux" | "win32"> = { linux: "linux", darwin: "darwin", windows: "win32" };

export function manifestFor(target: string): Record<string, unknown> {
  const platform = PLATFORM[target.split("-")[0]!]!;
  const exe = platform === "win32" ? "server/store-mcp-server.exe" : "server/store-mcp-server";
  return {
    manifest_version: "0.3",
    name: pkg.name,
    display_name: "Object storage (S3-compatible)",
    version: pkg.version,
    description: pkg.description,
    long_description:
      "Lists, reads, uploads and downloads objects in AWS S3, Cloudflare R2, Backblaze B2, MinIO, Ceph and any S3-compatible store. Local files stay inside the directory you allow.",
    author: { name: "store-mcp-server" },
    repository: { type: "git", url: "https://github.com/store-mcp-server/store-mcp-server" },
    license: pkg.license,
    keywords: ["s3", "object storage", "r2", "b2", "minio", "ceph"],
    server: {
      type: "binary",
      entry_point: exe,
      mcp_config: {
        command: `\${__dirname}/${exe}`,
        args: [],
        env: {
          STORE_ACCESS_KEY_ID: "${user_config.access_key_id}",
          STORE_SECRET_ACCESS_KEY: "${user_config.secret_access_key}",
          STORE_REGION: "${user_config.region}",
          STORE_ENDPOINT_URL: "${user_config.endpoint_url}",
          STORE_ALLOWED_DIRS: "${user_config.allowed_directory}",
          STORE_READ_ONLY: "${user_config.read_only}",
        },
      },
    },
    user_config: {
      access_key_id: {
        type: "string",
        title: "Access key ID",
        description: "The access key ID for your store",
        required: true,
      },
      secret_access_key: {
        type: "string",
        title: "Secret access key",
        description: "The secret access key (kept in your system's keychain)",
        required: true,
        sensitive: true,
      },
      region: {
        type: "string",
        title: "Region",
        description: "e.g. us-east-1; auto for Cloudflare R2",
        required: false,
        default: "us-east-1",
      },
      endpoint_url: {
        type: "string",
        title: "Endpoint URL",
        description: "Leave empty for AWS S3; e.g. https://<account>.r2.cloudflarestorage.com",
        required: false,
        default: "",
      },
      allowed_directory: {
        type: "directory",
        title: "Allowed directory",
        description: "Uploads and downloads stay inside this folder",
        required: false,
      },
      read_only: {
        type: "boolean",
        title: "Read-only",
        description: "Offer only tools that do not change the store",
        required: false,
        default: false,
      },
    },
    compatibility: { platforms: [platform] },
  };
}

function mcpb(args: string[]): string {
  const out = Bun.spawnSync([MCPB, ...args], { stdout: "pipe", stderr: "pipe" });
  if (out.exitCode !== 0)
    throw new Error(
      `mcpb ${args.join(" ")} failed (${out.exitCode}): ${out.stderr.toString()}${out.stdout.toString()}`,
    );
  return out.stdout.toString();
}

/** Writes store-mcp-server-<version>-<target>.mcpb into `outDir` from the compiled `binary`; validates it first. */
export function packBundle(binary: string, target: string, outDir: string): string {
  const stage = join(outDir, `mcpb-${target}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, "server"), { recursive: true });
  const manifest = manifestFor(target);
  const exe = (manifest.server as { entry_point: string }).entry_point;
  copyFileSync(binary, join(stage, exe));
  writeFileSync(join(stage, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  mcpb(["validate", join(stage, "manifest.json")]);
  const file = join(outDir, `${pkg.name}-${pkg.version}-${target}.mcpb`);
  mcpb(["pack", stage, file]);
  rmSync(stage, { recursive: true, force: true });
  return file;
}

/** `mcpb info` of a bundle (name, version, size, signature). */
export const bundleInfo = (file: string) => mcpb(["info", file]);
/** Unpacks a bundle with the official CLI. */
export const unpackBundle = (file: string, dir: string) => void mcpb(["unpack", file, dir]);
