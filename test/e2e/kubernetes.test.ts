/**
 * The Kubernetes manifests (deploy/kubernetes): every overlay renders with
 * `kubectl kustomize`; the base holds what an operator relies on; and the
 * Redis overlay runs under `podman kube play` with the image built as the
 * container test builds it, Redis in a container beside two replicas: a job
 * started on one replica is followed on the other, readiness flips when
 * Redis stops and back when it returns, and SIGTERM drains (not ready
 * first, then a clean exit).
 *
 * What podman on one host cannot take is adapted, and only that (adapt()):
 * podman 4.3 cannot read env back from a Kubernetes Secret, so the Secret's
 * and the ConfigMap's values are inlined; one host has one network, so the
 * pods use the host's (the store, Ceph, listens on loopback), so declare no
 * container ports, and each replica gets its own port (two Deployments of one replica instead of one of two);
 * no registry is reachable, so the images are local; probes are Kubernetes'
 * to run (podman would run them inside the image, which has no shell), and
 * the test asks the same URLs itself; podman makes an emptyDir root's 0755
 * where Kubernetes makes it 0777, so /tmp is a world-writable host folder.
 * The pod spec otherwise runs as written: non-root 65532, read-only root
 * filesystem, no capabilities.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, readFileSync } from "node:fs";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { freePort } from "../../scripts/s3/local-servers.ts";
import { buildImage, buildProgramImage, podmanEnv } from "../helpers/container.ts";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { connectHttp } from "../helpers/http.ts";
import { REDIS_SERVER } from "../helpers/redis.ts";
import { freshBucket, s3, sdkClient } from "../helpers/s3.ts";
import { waitFor } from "../helpers/wait.ts";

const MiB = 1024 * 1024;
const KUSTOMIZE_DIR = `${import.meta.dir}/../../deploy/kubernetes`;
const RUN = `k8s${process.pid}`;
const SERVER_IMAGE = `localhost/store-mcp-server:${RUN}`;
const REDIS_IMAGE = `localhost/redis-server:${RUN}`;
const TOKEN = "kube-team-token-0123456789abcdef";
type Doc = Record<string, any>;

let env: Record<string, string>;
let proxy: FaultProxy;
let bucket: string;
let played: string;
const ports = { a: 0, b: 0, redis: 0 };
/** Each replica's /tmp, on the host. */
const scratch = { a: "", b: "" };
const DATA = randomBytes(16 * MiB, 71);

function sh(cmd: string[], allowFail = false): string {
  const out = Bun.spawnSync(cmd, { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  if (out.exitCode !== 0 && !allowFail)
    throw new Error(`${cmd.join(" ")} failed (${out.exitCode}): ${out.stderr.toString().slice(-1500)}`);
  return out.stdout.toString();
}

const render = (dir: string): Doc[] =>
  (Bun.YAML.parse(sh(["kubectl", "kustomize", `${KUSTOMIZE_DIR}/${dir}`])) as Doc[]).filter(Boolean);
const byKind = (docs: Doc[], kind: string, name?: string) =>
  docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));

test("every overlay renders, and the base holds what an operator relies on", () => {
  env = env ?? podmanEnv();
  for (const overlay of ["base", "overlays/redis", "overlays/oauth", "overlays/prometheus"])
    expect(render(overlay).length).toBeGreaterThan(0);
  const base = render("base");
  const [deployment] = byKind(base, "Deployment");
  expect(deployment!.spec.replicas).toBe(2);
  const pod = deployment!.spec.template.spec;
  const [server] = pod.containers;
  expect(server.livenessProbe.httpGet.path).toBe("/healthz");
  expect(server.readinessProbe.httpGet.path).toBe("/readyz");
  expect(server.resources.requests.cpu).toBeDefined();
  expect(server.resources.limits.memory).toBeDefined();
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
  expect(server.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
  expect(pod.volumes.find((v: Doc) => v.emptyDir)?.emptyDir.sizeLimit).toBe("2Gi");
  expect(server.volumeMounts.map((m: Doc) => m.mountPath)).toContain("/tmp");
  // Secrets come from a Secret, never from the ConfigMap or a literal.
  const secretNames = server.env.filter((e: Doc) => e.valueFrom?.secretKeyRef).map((e: Doc) => e.name);
  expect(secretNames).toEqual(expect.arrayContaining(["STORE_SECRET_ACCESS_KEY", "STORE_HTTP_TOKENS"]));
  const [config] = byKind(base, "ConfigMap");
  expect(Object.keys(config!.data).some((k) => /SECRET|TOKEN|KEY$/.test(k))).toBe(false);
  // Longer than the unready window and the grace together: Kubernetes' SIGKILL comes after the drain.
  expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(
    Number(config!.data.STORE_SHUTDOWN_UNREADY_MS) + Number(config!.data.STORE_SHUTDOWN_GRACE_MS),
  );
  for (const kind of ["Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy"])
    expect(byKind(base, kind)).toHaveLength(1);
  expect(byKind(base, "HorizontalPodAutoscaler")[0]!.spec.minReplicas).toBe(2);
  const prometheus = render("overlays/prometheus");
  expect(byKind(prometheus, "ConfigMap")[0]!.data.STORE_METRICS_LISTEN).toBe("0.0.0.0:9464");
});

/** The rendered Redis overlay as podman on one host can play it (the file's header says what changes and why). */
function adapt(docs: Doc[]): Doc[] {
  const secrets = new Map(
    byKind(docs, "Secret").map((s) => [
      s.metadata.name,
      Object.fromEntries(Object.entries(s.data as Record<string, string>).map(([k, v]) => [k, atob(v)])),
    ]),
  );
  const configs = new Map(byKind(docs, "ConfigMap").map((c) => [c.metadata.name, c.data as Record<string, string>]));
  const inline = (container: Doc, overrides: Record<string, string>) => {
    const values: Record<string, string> = {};
    for (const from of container.envFrom ?? []) Object.assign(values, configs.get(from.configMapRef.name));
    for (const e of container.env ?? [])
      values[e.name] = e.valueFrom
        ? secrets.get(e.valueFrom.secretKeyRef.name)![e.valueFrom.secretKeyRef.key]!
        : e.value;
    Object.assign(values, overrides);
    container.env = Object.entries(values).map(([name, value]) => ({ name, value }));
    delete container.envFrom;
    delete container.ports; // the host's own network: ports are the host's
    delete container.livenessProbe;
    delete container.readinessProbe;
  };
  const deployment = (name: string) => structuredClone(byKind(docs, "Deployment", name)[0]!);
  const redisPassword = secrets.get(byKind(docs, "Secret")[0]!.metadata.name)!.VALKEY_PASSWORD!;
  const state = deployment("store-mcp-state");
  state.metadata.name = `${RUN}-state`;
  state.spec.template.spec.hostNetwork = true;
  const valkey = state.spec.template.spec.containers[0];
  valkey.image = REDIS_IMAGE;
  valkey.args = [
    "--port",
    String(ports.redis),
    "--bind",
    "127.0.0.1",
    "--requirepass",
    redisPassword,
    "--save",
    "",
    "--appendonly",
    "no",
  ];
  inline(valkey, {});
  const replicas = (["a", "b"] as const).map((which) => {
    const d = deployment("store-mcp-server");
    d.metadata.name = `${RUN}-${which}`;
    d.spec.replicas = 1;
    d.spec.template.spec.hostNetwork = true;
    const server = d.spec.template.spec.containers[0];
    server.image = SERVER_IMAGE;
    // podman 4.3 makes an emptyDir root's and 0755 (Kubernetes: 0777): a world-writable host folder in its place.
    scratch[which] = tempDir(`kube-tmp-${which}`);
    chmodSync(scratch[which], 0o1777);
    d.spec.template.spec.volumes = d.spec.template.spec.volumes.map((v: Doc) =>
      v.emptyDir ? { name: v.name, hostPath: { path: scratch[which], type: "Directory" } } : v,
    );
    inline(server, {
      STORE_LISTEN: `127.0.0.1:${ports[which]}`,
      STORE_ENDPOINT_URL: proxy.endpoint,
      STORE_ACCESS_KEY_ID: s3().accessKeyId,
      STORE_SECRET_ACCESS_KEY: s3().secretAccessKey,
      STORE_HTTP_TOKENS: `team:${TOKEN}`,
      STORE_STATE_URL: `redis://:${encodeURIComponent(redisPassword)}@127.0.0.1:${ports.redis}/0`,
      STORE_SHUTDOWN_UNREADY_MS: "2000",
      STORE_CALL_BUDGET_SECONDS: "1",
      STORE_ALLOWED_DIRS: "/tmp",
      STORE_CALLER_RATE: "off",
    });
    return d;
  });
  return [state, ...replicas];
}

const url = (which: "a" | "b", path: string) => `http://127.0.0.1:${ports[which]}${path}`;
async function readyz(which: "a" | "b") {
  const res = await fetch(url(which, "/readyz")).catch(() => undefined);
  return res ? { status: res.status, body: (await res.json()) as Record<string, unknown> } : { status: 0, body: {} };
}
const pod = (name: string) => `${RUN}-${name}-pod-0`;

beforeAll(async () => {
  env = env ?? podmanEnv();
  proxy = await startFaultProxy(s3().endpoint);
  bucket = await freshBucket("kube");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: DATA }));
  ports.a = freePort();
  ports.b = freePort();
  ports.redis = freePort();
  buildImage(env, SERVER_IMAGE);
  buildProgramImage(env, REDIS_SERVER, REDIS_IMAGE);
  played = `${tempDir("kube-play")}/store-mcp-server.yaml`;
  await Bun.write(
    played,
    adapt(render("overlays/redis"))
      .map((d) => `---\n${JSON.stringify(d)}\n`)
      .join(""),
  );
  sh(["podman", "kube", "play", played]);
  await waitFor(
    "both replicas ready",
    async () => (await readyz("a")).status === 200 && (await readyz("b")).status === 200,
    60_000,
    250,
  );
}, 240_000);

afterAll(async () => {
  if (played) sh(["podman", "kube", "down", played], true);
  sh(["podman", "rmi", "-f", SERVER_IMAGE, REDIS_IMAGE], true);
  await proxy?.stop();
});

test("two replicas and Redis under podman kube play: a job started on one is followed on the other", async () => {
  expect(await readyz("a")).toEqual({
    status: 200,
    body: { ready: true, store: "answering", state_store: "connected" },
  });
  proxy.set({ kind: "throttle", bytesPerSecond: 4 * MiB });
  try {
    const a = await connectHttp(url("a", "/mcp"), TOKEN);
    let id: string;
    try {
      const started = (await a.callTool({
        name: "get_object",
        arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: "/tmp/big.bin" },
      })) as { structuredContent?: { job?: { id?: string } }; content?: { text?: string }[] };
      id = started.structuredContent?.job?.id ?? "";
      expect(id, JSON.stringify(started.content)).not.toBe("");
    } finally {
      await a.close();
    }
    const b = await connectHttp(url("b", "/mcp"), TOKEN);
    try {
      // job_status waits at most the call budget (1 s here): asked again until the job ends.
      const ask = async () =>
        (await b.callTool({ name: "job_status", arguments: { job_id: id } })) as {
          isError?: boolean;
          structuredContent?: { job?: { state?: string; id?: string } };
        };
      let status = await ask();
      for (let i = 0; i < 60 && status.structuredContent?.job?.state === "running"; i++) status = await ask();
      expect(status.isError).toBeFalsy();
      expect(status.structuredContent?.job).toMatchObject({ id, state: "done" });
      // Written by replica a into its pod's /tmp.
      expect(sha256(readFileSync(`${scratch.a}/big.bin`))).toBe(sha256(DATA));
    } finally {
      await b.close();
    }
  } finally {
    proxy.set({ kind: "pass" });
  }
}, 120_000);

test("readiness turns 503 naming the state store while Redis is down, and 200 when it is back", async () => {
  sh(["podman", "pod", "stop", "-t", "2", pod("state")]);
  await waitFor("replica a not ready", async () => (await readyz("a")).status === 503, 30_000, 200);
  expect(await readyz("a")).toMatchObject({ status: 503, body: { ready: false, state_store: "unreachable" } });
  // Liveness is the process: it still serves.
  expect((await fetch(url("a", "/healthz"))).status).toBe(200);
  sh(["podman", "pod", "start", pod("state")]);
  await waitFor("replica a ready again", async () => (await readyz("a")).status === 200, 30_000, 200);
}, 90_000);

test("SIGTERM drains: not ready at once while it still answers, then a clean exit", async () => {
  const stopping = Bun.spawn(["podman", "pod", "stop", "-t", "30", pod("b")], {
    env: { ...process.env, ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  await waitFor("replica b stopping", async () => (await readyz("b")).body.stopping === true, 10_000, 50);
  expect(await readyz("b")).toEqual({ status: 503, body: { ready: false, stopping: true } });
  expect(await stopping.exited).toBe(0);
  const exit = sh(["podman", "inspect", "--format", "{{.State.ExitCode}}", `${pod("b")}-server`]).trim();
  // 0: the server ended itself (a SIGKILL after the timeout would be 137).
  expect(exit).toBe("0");
  // The other replica serves on.
  expect((await readyz("a")).status).toBe(200);
}, 60_000);
