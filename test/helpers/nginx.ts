/**
 * A real reverse proxy for the scale-out tests: Debian's nginx, round robin
 * over the given upstreams, started in the foreground from a throwaway
 * prefix. A request that fails to reach an upstream — refused, or reset
 * before any answer (a stopping replica closes its listener on connections
 * it never accepted) — is retried on the next one, POSTs included (the
 * README's advice). The client's Host is passed on (the replicas check it).
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../scripts/s3/local-servers.ts";
import { tempDir } from "./files.ts";
import { tracked } from "./processes.ts";

export const NGINX = "/usr/sbin/nginx";

export interface Nginx {
  url: string;
  stop(): Promise<void>;
}

export async function startNginx(upstreamPorts: number[]): Promise<Nginx> {
  const prefix = tempDir("nginx");
  mkdirSync(join(prefix, "logs"), { recursive: true });
  const port = freePort();
  const conf = `
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  upstream replicas {
${upstreamPorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=30s;`).join("\n")}
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 10m;
    location / {
      proxy_pass http://replicas;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_read_timeout 300s;
      proxy_next_upstream error timeout non_idempotent;
    }
  }
}
`;
  writeFileSync(join(prefix, "nginx.conf"), conf);
  const proc = Bun.spawn([NGINX, "-p", prefix, "-c", join(prefix, "nginx.conf"), "-g", "daemon off;"], {
    stdout: "ignore",
    stderr: "pipe",
  });
  tracked(proc);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`nginx did not start: ${await new Response(proc.stderr).text()}`);
    await Bun.sleep(50);
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async stop() {
      proc.kill("SIGQUIT");
      await proc.exited;
    },
  };
}
