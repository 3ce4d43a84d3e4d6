/** What a bulk job decides for each item, and what became of it: shared by the engine and the tally. */

/** What became of one item. */
export type Outcome =
  | { kind: "done"; name: string; bytes: number }
  | { kind: "unchanged"; name: string; bytes: number }
  | { kind: "unsafe" | "failed" | "conflict"; name: string; code: string; message: string }
  /** Left out by include/exclude, or not an object at all (a folder marker): not reported one by one. */
  | { kind: "ignored" };

/** An item the plan decided to act on; `run` is skipped in a dry run (it then counts as done). */
export interface Action {
  kind: "action";
  name: string;
  bytes: number;
  /** What running it also deletes (a move's source), for a dry run's count. */
  alsoDeletes?: string;
  run(signal: AbortSignal): Promise<Outcome>;
}
