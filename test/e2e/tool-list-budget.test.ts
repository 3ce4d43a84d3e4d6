/**
 * What tools/list costs a client's context, measured on the binary exactly as
 * users get it (job tools included), for a client that declares no tasks and
 * for one that does (2025-11-25: the tools that take tasks say so, ~430
 * bytes more): at most 20 KiB of JSON by default, 27 KiB with every tool,
 * 32 KiB with every tool over two stores. Each new tool or parameter pays for
 * itself within these. tools/list makes no request to a store, so the stores
 * here are addresses nothing listens on.
 */
import { expect, test } from "bun:test";
import { connectBinary } from "../helpers/mcp.ts";

const STORE = {
  STORE_ENDPOINT_URL: "http://127.0.0.1:9",
  AWS_ACCESS_KEY_ID: "budgetkey",
  AWS_SECRET_ACCESS_KEY: "budgetsecret",
  AWS_REGION: "us-east-1",
};
const EVERY_TOOL = { STORE_ALLOW_ADMIN: "true", STORE_ALLOW_DELETE: "true" };
const SECOND_STORE = {
  STORE_STORES: "far",
  STORE_FAR_ENDPOINT_URL: "http://127.0.0.1:9",
  STORE_FAR_ACCESS_KEY_ID: "farkey",
  STORE_FAR_SECRET_ACCESS_KEY: "farsecret",
};

for (const { what, env, tools: count, kb } of [
  { what: "by default", env: {}, tools: 24, kb: 20 },
  { what: "with every tool", env: EVERY_TOOL, tools: 34, kb: 27 },
  { what: "with every tool over two stores", env: { ...EVERY_TOOL, ...SECOND_STORE }, tools: 35, kb: 32 },
]) {
  for (const tasks of [false, true])
    test(`tools/list ${what}${tasks ? ", tasks declared" : ""}: ${count} tools within ${kb} KiB`, async () => {
      const session = await connectBinary({
        env: { ...STORE, ...env },
        ...(tasks ? { capabilities: { tasks: {} } } : {}),
      });
      try {
        const { tools } = await session.client.listTools();
        expect(tools.length).toBe(count);
        for (const tool of ["job_status", "cancel_job", "list_jobs"]) expect(tools.map((t) => t.name)).toContain(tool);
        const marked = tools.filter((t) => (t as { execution?: unknown }).execution !== undefined);
        expect(marked.length > 0).toBe(tasks);
        expect(JSON.stringify({ tools }).length).toBeLessThanOrEqual(kb * 1024);
      } finally {
        await session.close();
      }
    });
}
