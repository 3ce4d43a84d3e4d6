import { expect, test } from "bun:test";
import { QuerySlots, type SlotOwner } from "../../../../src/content/query/query-slots.ts";

const owner = (id: string, secondsPerHour = 0, job?: string): SlotOwner => ({
  id,
  job: () => job,
  secondsPerHour,
  sql: "SELECT count(*) FROM objects",
});

test("without owners (one caller) every slot may be taken; the next is QueryBusy; a release frees one, once", () => {
  const slots = new QuerySlots(2);
  const a = slots.take();
  slots.take();
  expect(() => slots.take()).toThrow(expect.objectContaining({ code: "QueryBusy" }));
  a();
  a();
  expect(slots.running).toBe(1);
  slots.take();
  expect(() => slots.take()).toThrow(expect.objectContaining({ code: "QueryBusy" }));
});

test("a caller among several holds at most slots - 1: their next is refused naming their running job; another caller's runs", () => {
  const slots = new QuerySlots(2);
  slots.take(owner("label:alice", 0, "job-1"));
  let refusal: Error | undefined;
  try {
    slots.take(owner("label:alice"));
  } catch (err) {
    refusal = err as Error;
  }
  expect(refusal).toMatchObject({ code: "QueryBusy" });
  expect(String(refusal?.message)).toContain("job job-1");
  expect(slots.take(owner("label:bob"))).toBeFunction();
  expect(() => slots.take(owner("label:carol"))).toThrow(expect.objectContaining({ code: "QueryBusy" }));
});

test("query time is budgeted per caller: spent, the next query waits for the refill; another caller's is their own", () => {
  let now = 0;
  const slots = new QuerySlots(2, () => now);
  const release = slots.take(owner("sub:a", 60));
  now += 61_000;
  release();
  expect(() => slots.take(owner("sub:a", 60))).toThrow(expect.objectContaining({ code: "QueryBudgetSpent" }));
  slots.take(owner("sub:b", 60))();
  // 60 s an hour refill at a second a minute: two minutes later there is one again.
  now += 120_000;
  expect(slots.take(owner("sub:a", 60))).toBeFunction();
});
