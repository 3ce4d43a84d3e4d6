/** The job registry: a job is its caller's, ended jobs are kept an hour and at most 100 per caller, a cancel aborts the work and waits for it. */
import { expect, test } from "bun:test";
import {
  JOB_KEPT_MS,
  JOBS_PER_CALLER,
  JobRegistry,
  type JobShare,
  type JobView,
  type SharedJob,
} from "../../../src/mcp/jobs/jobs.ts";

const ended = (text = "ok") => ({
  answer: Promise.resolve({ content: [{ type: "text" as const, text }] }),
  abort: new AbortController(),
  progress: {},
});
const isError = (r: { isError?: boolean }) => r.isError === true;

test("another caller's id is unknown; the owner gets the answer", async () => {
  const jobs = new JobRegistry();
  const job = jobs.adopt("alice", "upload_file", new Date(), ended("stored"), isError);
  await Bun.sleep(0);
  expect(await jobs.status("bob", job.id, 0, new AbortController().signal)).toBeUndefined();
  expect(await jobs.cancel("bob", job.id)).toBeUndefined();
  expect(await jobs.list("bob")).toEqual([]);
  const mine = await jobs.status("alice", job.id, 0, new AbortController().signal);
  expect(mine?.job.state).toBe("done");
  expect(mine?.result?.content[0]).toMatchObject({ text: "stored" });
});

test("a caller keeps at most 100 jobs (the oldest ended go first), and ended jobs an hour", async () => {
  let now = Date.now();
  const jobs = new JobRegistry(() => now);
  const first = jobs.adopt("alice", "find_objects", new Date(now), ended(), isError);
  await Bun.sleep(0);
  for (let i = 0; i < 150; i++) {
    now += 1;
    jobs.adopt("alice", "find_objects", new Date(now), ended(), isError);
    await Bun.sleep(0);
  }
  const listed = await jobs.list("alice");
  // Exactly the cap: listing does not drop one more than adding needs.
  expect(listed.length).toBe(JOBS_PER_CALLER);
  expect(listed.some((j) => j.id === first.id)).toBe(false);
  now += JOB_KEPT_MS + 1;
  expect(await jobs.list("alice")).toEqual([]);
});

test("cancel aborts the work, waits for its clean-up, and the job says cancelled; waiting gives up after wait_seconds", async () => {
  const jobs = new JobRegistry();
  const abort = new AbortController();
  let cleaned = false;
  const answer = new Promise<{ content: { type: "text"; text: string }[]; isError?: boolean }>((resolve) =>
    abort.signal.addEventListener("abort", () =>
      setTimeout(
        () => ((cleaned = true), resolve({ content: [{ type: "text", text: "Cancelled" }], isError: true })),
        20,
      ),
    ),
  );
  const job = jobs.adopt("alice", "upload_file", new Date(), { answer, abort, progress: { done_bytes: 5 } }, isError);
  const started = performance.now();
  const waited = await jobs.status("alice", job.id, 50, new AbortController().signal);
  expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  expect(waited?.job).toMatchObject({ state: "running", progress: { done_bytes: 5 } });
  expect(await jobs.cancel("alice", job.id)).toMatchObject({ state: "cancelled" });
  expect(cleaned).toBe(true);
});

/**
 * Another replica's job that ends while its record is being read: the "ended" event comes on its own connection and
 * may arrive before the read's answer (still "running"). The waiter is listening before it reads, so it is woken.
 */
test("another replica's job ending while its record is read is not missed: the wait ends at once, done", async () => {
  const id = "job_AAAAAAAAAAAAAAAAAAAAAA";
  const record = (state: JobView["state"]): SharedJob => ({
    view: { id, tool: "get_object", state, started_at: new Date().toISOString(), progress: {} },
    owner: "alice",
    args: {},
    alive: true,
  });
  let state: JobView["state"] = "running";
  const waiting = new Set<() => void>();
  const share: JobShare = {
    save() {},
    async load() {
      const seen = record(state);
      // The job ends on its replica, and the event is heard, before this read's answer is.
      if (state === "running") {
        state = "done";
        for (const wake of [...waiting]) wake();
      }
      return seen;
    },
    async listOf() {
      return [];
    },
    async cancel() {},
    ended(_id, ms, signal) {
      return new Promise((resolve) => {
        const done = () => (waiting.delete(done), clearTimeout(timer), resolve());
        const timer = setTimeout(done, ms);
        signal.addEventListener("abort", done, { once: true });
        waiting.add(done);
      });
    },
    onCancel() {},
    drop() {},
  };
  const jobs = new JobRegistry(Date.now, undefined, share);
  const started = performance.now();
  const found = await jobs.status("alice", id, 3_000, new AbortController().signal);
  expect(found?.job.state).toBe("done");
  expect(performance.now() - started).toBeLessThan(1_000);
  expect(waiting.size).toBe(0);
});
