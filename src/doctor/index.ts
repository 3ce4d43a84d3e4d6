/**
 * `store-mcp-server doctor`: what is wrong with this store setup, in order —
 * configuration and credential source, the endpoint (DNS, TCP, TLS, HTTP,
 * the store's kind), the clock, the credentials (ListBuckets), each bucket
 * (region, listing), addressing style, and with --write-test a write round
 * trip in both checksum modes. One line per check, printed as it finishes,
 * the fix for each failure; every request to the store has a deadline, so a
 * store that never answers or trickles cannot hang it; exit 0 when nothing
 * failed, 1 otherwise; --json for the same as JSON.
 */
import { defineCommand, runMain } from "citty";
import { ARGS, cliOptionsFrom } from "../config/cli-options.ts";
import { type Config, resolveConfig } from "../config/config.ts";
import { storeConfig } from "../config/stores-config.ts";
import { realAllowedDirs } from "../local/allowed.ts";
import { registerStartupCredentials, scrubSecrets } from "../runtime/redact.ts";
import { clockCheck, probeEndpoint, providerCheck } from "./network.ts";
import { type Check, CheckLog, exitCodeOf, renderCheck } from "./report.ts";
import { addressingCheck, bucketChecks, credentialSourceCheck, listBucketsCheck, storeProbe } from "./store.ts";
import { writeChecks } from "./write-checks.ts";

/** Buckets checked when none is named: the first few listed. */
const FIRST_BUCKETS = 3;

const DOCTOR_ARGS = {
  ...ARGS,
  "write-test": {
    type: "string",
    description:
      "Also put, read and delete a tiny object in this bucket, in both checksum modes (nothing is left behind)",
  },
  json: { type: "boolean", description: "Print the checks as JSON" },
  store: {
    type: "string",
    description: "With several stores: check only this one (default: every store, one section each)",
  },
} as const;

export async function diagnose(
  config: Config,
  writeTest: string | undefined,
  checks = new CheckLog(),
): Promise<Check[]> {
  checks.push({
    name: "configuration",
    status: "ok",
    detail: `region ${config.region}, endpoint ${config.endpointUrl ?? "AWS S3"}, ${config.forcePathStyle ? "path-style" : "virtual-hosted"}, checksums ${config.checksums.toLowerCase()}`,
  });
  const probe = await storeProbe(config);
  checks.push(await credentialSourceCheck(config, probe));
  const endpoint = new URL(config.endpointUrl ?? `https://s3.${config.region}.amazonaws.com`);
  const facts = await probeEndpoint(endpoint, checks);
  if (!facts.reachable) return checks.all;
  checks.push(clockCheck(facts.storeDate));
  checks.push(providerCheck(config.provider, facts.answeredAs));
  if (checks.all.some((c) => c.name === "credentials source" && c.status === "fail")) return checks.all;
  const listed = await listBucketsCheck(config, probe);
  checks.push(listed.check);
  const buckets = config.buckets.length > 0 ? config.buckets : listed.buckets.slice(0, FIRST_BUCKETS);
  let usable: string | undefined;
  for (const bucket of buckets) {
    const result = await bucketChecks(config, probe, bucket);
    checks.push(...result.checks);
    if (result.usable) usable ??= bucket;
  }
  if (usable) checks.push(await addressingCheck(config, probe, usable));
  else if (buckets.length === 0 && listed.check.status === "ok")
    checks.push({ name: "addressing", status: "skip", detail: "no bucket to try it on" });
  if (writeTest) checks.push(...(await writeChecks(config, probe, writeTest)));
  return checks.all;
}

async function run(rawArgs: string[], args: Record<string, unknown>): Promise<void> {
  registerStartupCredentials(rawArgs, process.env);
  const { cli, errors } = cliOptionsFrom(rawArgs, args, DOCTOR_ARGS);
  const resolved = resolveConfig(cli, process.env);
  const problems = [...errors, ...(resolved.ok ? [] : resolved.errors)];
  if (resolved.ok)
    problems.push(
      ...realAllowedDirs(resolved.config.allowedDirs, process.cwd(), resolved.config.allowBroadDirs).errors,
    );
  const writeTest = typeof args["write-test"] === "string" ? (args["write-test"] as string) : undefined;
  const json = args.json === true;
  // Human output: each line as its check finishes (a slow step shows where it is); JSON: one document at the end.
  const log = new CheckLog(json ? undefined : (check) => process.stdout.write(`${renderCheck(check)}\n`));
  const only = typeof args.store === "string" ? (args.store as string) : undefined;
  const stores = resolved.ok ? resolved.config.stores.filter((s) => only === undefined || s.name === only) : [];
  if (resolved.ok && only !== undefined && stores.length === 0)
    problems.push(
      `--store: no store named "${only}" (the stores are ${resolved.config.stores.map((s) => s.name).join(", ")}).`,
    );
  if (problems.length > 0 || !resolved.ok)
    log.push(
      ...problems.map((p) => ({
        name: "configuration",
        status: "fail" as const,
        detail: scrubSecrets(p),
        fix: "fix the option or variable it names (store-mcp-server --help)",
      })),
    );
  else if (resolved.config.stores.length <= 1) await diagnose(resolved.config, writeTest, log);
  else {
    // One section per store: its checks named after it (each store's own log keeps the plain names its steps look for).
    for (const store of stores)
      await diagnose(
        storeConfig(resolved.config, store),
        writeTest,
        new CheckLog((check) => log.push({ ...check, name: `${store.name}: ${check.name}` })),
      );
  }
  const code = exitCodeOf(log.all);
  process.stdout.write(
    json
      ? `${JSON.stringify({ ok: code === 0, checks: log.all }, null, 2)}\n`
      : `${code === 0 ? "All required checks passed." : "Some checks failed: fix the first ✗ first."}\n`,
  );
  process.exit(code);
}

const doctor = defineCommand({
  meta: {
    name: "store-mcp-server doctor",
    description:
      "Checks the store setup: configuration, endpoint, clock, credentials, buckets, addressing (and --write-test BUCKET)",
  },
  args: DOCTOR_ARGS,
  run: ({ rawArgs, args }) => run(rawArgs, args as Record<string, unknown>),
});

export function runDoctor(rawArgs: string[]): void {
  void runMain(doctor, { rawArgs });
}
