/**
 * Remote mode (--transport http): one S3 client and one memory budget for
 * the process, an MCP server per request with the tools its caller may use
 * (caller-servers.ts: kept afterwards for the caller's next request), the
 * HTTP transport in front, SIGTERM (SIGINT) that drains before exiting, and
 * SIGHUP that reopens the audit log.
 */

import { CallerAccess } from "../access/caller-access.ts";
import { PassThrough } from "../access/pass-through.ts";
import { missingScope, TOOL_GROUPS } from "../access/policy.ts";
import { loadPolicy } from "../access/policy-file.ts";
import { PolicyHolder } from "../access/policy-holder.ts";
import { createAuthenticator } from "../auth/index.ts";
import type { Config } from "../config/config.ts";
import type { HttpConfig } from "../config/http-config.ts";
import { addressesOf } from "../mcp/call/addresses.ts";
import { JOB_KEPT_MS, JobRegistry } from "../mcp/jobs/jobs.ts";
import { LazyJsonSchemaValidator } from "../mcp/lazy-validator.ts";
import { READ_MEMORY_BUDGET, serverOptions, watchedJobs } from "../mcp/server.ts";
import { type AuditLog, refusedEntry } from "../runtime/audit.ts";
import { CallTracker, SHUTDOWN_SIGNALS } from "../runtime/lifecycle.ts";
import type { Logger } from "../runtime/log.ts";
import { ByteBudget } from "../runtime/memory.ts";
import { scrubSecrets } from "../runtime/redact.ts";
import { telemetry } from "../runtime/telemetry.ts";
import type { Storage } from "../storage/index.ts";
import { createStoreStorages } from "../storage/index.ts";
import * as TOOLS from "../tool-registry/index.ts";
import { EVERY_TOOL } from "../tool-registry/index.ts";
import { callerServers } from "./caller-servers.ts";
import { confirmationKey } from "./confirmation-key.ts";
import { type HttpServer, startHttpServer } from "./http.ts";
import { LegacyQuestions } from "./legacy-questions.ts";
import { readinessProbe, storeUrlOf } from "./readiness.ts";
import { SharedJobs } from "./shared-jobs.ts";
import { callerLimitsFor, type Limiter, SharedCallerLimits } from "./shared-limits.ts";

export function startRemote(
  config: Config,
  allowedDirs: string[],
  storages: { storage: Storage; storageOf(name: string): Storage },
  log: Logger,
  audit?: AuditLog,
): void {
  const http = config.http!;
  const calls = new CallTracker();
  const memory = new ByteBudget(READ_MEMORY_BUDGET);
  telemetry().watch("memory.budget.used", () => memory.inUse);
  // Made here, not by the HTTP server: a running job holds one of its caller's in-flight slots.
  const limits = callerLimitsFor(http, log);
  const { jobs, share } = processJobs(config, limits, log);
  const options = serverOptions(config, allowedDirs);
  const policy = config.policy ? startPolicy(config.policy, config, log) : undefined;
  if (policy) followPolicy(policy, jobs, share, log);
  const sealingKey = sealingKeyFor(config, log);
  // Identity pass-through: each caller's own STS credentials on the default store.
  const passThrough = config.passThrough
    ? new PassThrough({ ...config.passThrough, region: config.region }, config, createStoreStorages)
    : undefined;
  const server = startHttpServer({
    config: http,
    limits,
    readiness: readinessProbe({
      storeUrl: storeUrlOf(config.endpointUrl, config.region),
      ...(limits instanceof SharedCallerLimits ? { stateStore: () => limits.stateStore() } : {}),
    }),
    // Sealed with the same shared key: any replica reads a 2025 client's declaration, the store relays its answers.
    questions: new LegacyQuestions(sealingKey, share),
    auth: createAuthenticator(http),
    serverFor: callerServers({
      options,
      // The tools loaded once for the process: every server registers them at once (caller policies guard with them).
      shared: {
        log,
        calls,
        memory,
        jobs,
        jsonSchemaValidator: new LazyJsonSchemaValidator(),
        tools: TOOLS,
        confirmationKey: sealingKey,
        ...(audit ? { audit } : {}),
      },
      storages,
      limits: http.limits,
      policy,
      passThrough,
      defaultStore: config.stores[0]?.name ?? "default",
    }),
    missingScope: (name, args, caller) => missingScope(EVERY_TOOL, name, args, caller.scopes),
    policyRefusal: (name, caller) => {
      const tool = policy && EVERY_TOOL.find((t) => t.name === name);
      if (!tool || new CallerAccess(policy.current, caller).offers(tool)) return undefined;
      return `PolicyDenied: the policy has no rule giving ${caller.id} the tool ${name}. Next: use the tools listed for you (tools/list), or ask the server's operator for a rule that grants it.`;
    },
    // Calls refused before any MCP server saw them still get their audit line.
    refusedCall: (caller, name, args, code, id) =>
      audit?.write(refusedEntry(caller.id, name, args, code, id, addressesOf(name))),
    log,
  });
  log.info(`ready on ${server.url} (resource ${http.resourceUrl})`);
  if (allowedDirs.length === 0)
    log.info(
      "local files are off (no --allowed-dir): upload_file and get_object download are not offered; presign_url moves bytes",
    );

  stopOnSignals({ http, server, jobs, calls, share, audit, policy, log });
}

/**
 * One registry for the process: each request gets a server of its own, a job outlives it. With --state-url every
 * replica sees every job (shared-jobs.ts); without, a job lives in its replica, and a well-formed id this one does not
 * know may be another's (one hint a minute in the log).
 */
function processJobs(
  config: Config,
  limits: Limiter,
  log: Logger,
): { jobs: JobRegistry; share: SharedJobs | undefined } {
  const http = config.http!;
  let hintedAt = -Infinity;
  const share = http.stateUrl ? new SharedJobs(http.stateUrl, JOB_KEPT_MS, log) : undefined;
  const jobs = watchedJobs(
    new JobRegistry(
      Date.now,
      () => {
        if (share || performance.now() - hintedAt < 60_000) return;
        hintedAt = performance.now();
        log.info(
          "job_status / cancel_job for a job id this replica does not know: with several replicas and no --state-url, a job is known only to the one that runs it (share jobs through Redis/Valkey with --state-url, or route a caller's requests to one replica, e.g. sticky sessions)",
        );
      },
      share,
      { maxRunning: config.maxRunningJobs, holdSlot: (owner) => limits.hold(owner) },
    ),
  );
  return { jobs, share };
}

/** Jobs follow the policy: on every change, those it would now refuse stop for good, on every replica. */
function followPolicy(policy: PolicyHolder, jobs: JobRegistry, share: SharedJobs | undefined, log: Logger): void {
  const FROM_PEER = "a policy change on another replica";
  policy.onChange = (why) => {
    void jobs
      .recheckRunning()
      .then((n) => n > 0 && log.info(`policy change: ${n} running job(s) it refuses were stopped`));
    if (why !== FROM_PEER) share?.policyChanged();
  };
  share?.onPolicy(() => policy.reload(FROM_PEER));
}

/** The key confirmations and 2025 questions are sealed with: shared by every replica where a shared secret allows. */
function sealingKeyFor(config: Config, log: Logger): Uint8Array {
  const http = config.http!;
  const sealing = confirmationKey({
    configured: http.confirmationKey,
    tokens: http.tokens.map((t) => t.token),
    storeSecretKey: config.credentials?.secretAccessKey,
  });
  if (!sealing.shared && http.stateUrl)
    log.warn(
      "confirmations are sealed with this replica's own key: no shared secret to derive one from (OAuth without static tokens or a store secret key). Set STORE_CONFIRMATION_KEY (32+ random characters, the same on every replica) so that an answer may reach any replica.",
    );
  return sealing.key;
}

/**
 * SIGTERM and SIGINT drain and exit: no new requests, the grace for calls and
 * jobs in flight, then what is left cancelled (a cut transfer kept to resume)
 * and recorded. A service's SIGHUP reloads (log rotation: the audit log is
 * opened anew; the policy read again).
 */
function stopOnSignals(running: {
  http: HttpConfig;
  server: HttpServer;
  jobs: JobRegistry;
  calls: CallTracker;
  share: SharedJobs | undefined;
  audit: AuditLog | undefined;
  policy: PolicyHolder | undefined;
  log: Logger;
}): void {
  const { http, server, jobs, calls, share, audit, policy, log } = running;
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`shutting down (${why}): no new requests, up to ${http.shutdownGraceMs} ms for calls in flight`);
    const graceEnds = performance.now() + http.shutdownGraceMs;
    await server.shutdown(http.shutdownGraceMs, async () => {
      // Jobs get the same grace as requests; what is cut after it is a restart's doing, and its jobs say so (interrupted).
      await jobs.settled(graceEnds - performance.now());
      jobs.stopping();
      await calls.shutdown(5_000);
      // A cut tool's answer still goes through its call's steps (call/call-steps.ts): the jobs end with it, not before.
      await jobs.settled(2_000);
    });
    // Jobs cut by the shutdown have ended (cancelled, their transfers kept to resume): their records say so before the exit.
    await share?.flush(2_000);
    // The last calls' spans go out before the exit (nothing, with traces off).
    await withinMs(telemetry().flush(), 2_000);
    process.exit(0);
  };
  // A service's SIGHUP reloads (log rotation: the audit log is opened anew); SIGTERM and SIGINT stop it.
  for (const signal of SHUTDOWN_SIGNALS.filter((s) => s !== "SIGHUP")) process.on(signal, () => void stop(signal));
  process.on("SIGHUP", () => {
    audit?.reopen();
    policy?.reload("SIGHUP");
    log.info(
      `SIGHUP: ${[audit ? "audit log reopened" : "", policy ? "policy read again" : ""].filter(Boolean).join(", ") || "nothing to reload"}`,
    );
  });
  process.on("unhandledRejection", (reason) =>
    log.error(`unhandled rejection: ${scrubSecrets(String((reason as Error)?.stack ?? reason))}`),
  );
}

/** The policy file, checked at start (a broken one stops the start, listing its problems), then watched. */
function startPolicy(file: string, config: Config, log: Logger): PolicyHolder {
  const names = { tools: EVERY_TOOL.map((t) => t.name), groups: TOOL_GROUPS, stores: config.stores.map((s) => s.name) };
  const loaded = loadPolicy(file, names);
  if (!loaded.ok) {
    process.stderr.write(
      `store-mcp-server: cannot start, the policy ${file} has ${loaded.errors.length} problem(s):\n${loaded.errors.map((e) => `  - ${e}`).join("\n")}\n`,
    );
    process.exit(1);
  }
  log.info(`policy ${file}: ${loaded.policy.rules.length} rule(s); callers no rule names get no tool`);
  const holder = new PolicyHolder(file, loaded.policy, names, log);
  holder.watch();
  return holder;
}

/** `work`, or nothing more after `ms` (a collector that does not answer does not hold the exit). */
async function withinMs(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work.catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
