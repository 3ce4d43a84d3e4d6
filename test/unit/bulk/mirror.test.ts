import { expect, test } from "bun:test";
import { failure } from "../../../src/bulk/engine.ts";
import { deletesHeldBack } from "../../../src/bulk/mirror.ts";
import { Tally } from "../../../src/bulk/tally.ts";
import { ActionableError } from "../../../src/runtime/errors.ts";

const tally = () => new Tally({ report: () => {} } as never, "downloading");
const archived = () =>
  failure(
    "cold/a.csv",
    new ActionableError({
      resource: "s3://b/cold/a.csv",
      code: "ObjectArchived",
      message: "The object is archived (DEEP_ARCHIVE).",
      hint: "a long hint about restoring it".repeat(20),
    }),
  );

test("a mirror's deletes wait for archived objects, and say that is why (not that transfers failed)", () => {
  const held = tally();
  held.add(archived());
  expect(held.counts.archived).toBe(1);
  expect(deletesHeldBack("done", held)).toContain("archived");
  expect(deletesHeldBack("done", held)).not.toContain("failed");
  held.add(failure("x", new ActionableError({ resource: "x", code: "AccessDenied", message: "no", hint: "ask" })));
  expect(deletesHeldBack("done", held)).toContain("some transfers failed");
  expect(deletesHeldBack("done", tally())).toBeUndefined();
});

test("an archived object's problem is its message alone: how to restore is said once, for the job", () => {
  const outcome = archived();
  expect(outcome).toMatchObject({ code: "ObjectArchived", message: "The object is archived (DEEP_ARCHIVE)." });
});
