/**
 * Builds a local container image of the compiled binary with rootful podman
 * (no Docker engine and no registry here): settings from FACTS.md, a rootfs of
 * the binary plus the libraries ldd lists, test/container/Containerfile.
 */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { tempDir } from "./files.ts";
import { requireBinary } from "./mcp.ts";

export const IMAGE = "localhost/store-mcp-server:test";

/** The environment podman needs in this sandbox: runc, cgroupfs, ulimits within the hard limits, private storage. */
export function podmanEnv(): Record<string, string> {
  const dir = tempDir("podman-conf");
  writeFileSync(
    join(dir, "containers.conf"),
    [
      "[containers]",
      'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]',
      "",
      "[engine]",
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      "",
    ].join("\n"),
  );
  return { CONTAINERS_CONF: join(dir, "containers.conf") };
}

function run(cmd: string[], env: Record<string, string>): string {
  const out = Bun.spawnSync(cmd, { env: { ...process.env, ...env }, stderr: "pipe", stdout: "pipe" });
  if (out.exitCode !== 0)
    throw new Error(`${cmd.join(" ")} failed (${out.exitCode}): ${out.stderr.toString().slice(-2000)}`);
  return out.stdout.toString();
}

/** Assembles the rootfs and builds `image` (IMAGE); throws (failing the test) when podman cannot. */
export function buildImage(env: Record<string, string>, image = IMAGE): void {
  const binary = requireBinary();
  const context = tempDir("image");
  const rootfs = join(context, "rootfs");
  const place = (from: string, to = from) => {
    mkdirSync(dirname(join(rootfs, to)), { recursive: true });
    copyFileSync(from, join(rootfs, to));
  };
  place(binary, "/usr/local/bin/store-mcp-server");
  // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" and the loader "/lib64/ld-linux-x86-64.so.2 (0x…)".
  for (const line of run(["ldd", binary], env).split("\n")) {
    const lib = line.match(/=>\s+(\/\S+)/)?.[1] ?? line.match(/^\s+(\/\S+)\s+\(/)?.[1];
    if (lib) place(lib);
  }
  mkdirSync(join(rootfs, "etc"), { recursive: true });
  writeFileSync(
    join(rootfs, "etc/passwd"),
    "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
  );
  writeFileSync(join(rootfs, "etc/group"), "root:x:0:\nnonroot:x:65532:\n");
  for (const d of ["tmp", "data", "home/nonroot"]) mkdirSync(join(rootfs, d), { recursive: true, mode: 0o1777 });
  copyFileSync(resolve(import.meta.dir, "../container/Containerfile"), join(context, "Containerfile"));
  run(["podman", "build", "--pull=never", "-q", "-t", image, "-f", join(context, "Containerfile"), context], env);
}

/**
 * An image of one host program (Debian's redis-server, say) from a rootfs of
 * the program and the libraries ldd lists, as buildImage does for ours.
 */
export function buildProgramImage(env: Record<string, string>, program: string, image: string): void {
  const context = tempDir("program-image");
  const rootfs = join(context, "rootfs");
  const place = (from: string) => {
    mkdirSync(dirname(join(rootfs, from)), { recursive: true });
    copyFileSync(from, join(rootfs, from));
  };
  place(program);
  for (const line of run(["ldd", program], env).split("\n")) {
    const lib = line.match(/=>\s+(\/\S+)/)?.[1] ?? line.match(/^\s+(\/\S+)\s+\(/)?.[1];
    if (lib) place(lib);
  }
  mkdirSync(join(rootfs, "tmp"), { recursive: true, mode: 0o1777 });
  writeFileSync(join(context, "Containerfile"), `FROM scratch\nCOPY rootfs/ /\nENTRYPOINT ["${program}"]\n`);
  run(["podman", "build", "--pull=never", "-q", "-t", image, "-f", join(context, "Containerfile"), context], env);
}
