/**
 * The policy in force, reloaded on SIGHUP (remote.ts calls `reload`) and
 * when the file changes (its directory is watched: editors and config
 * management replace a file rather than write it in place). A file that
 * does not parse or validate leaves the previous policy in force, and the
 * log says why; every request takes the policy in force when it starts.
 *
 * A watched change is taken only once the file has stood still: the same
 * inode, size, modification time and content over STABLE_MS. `cat >`, an
 * append with `>>`, scp or `kubectl cp` write in place, and a file read
 * halfway could cut a rule inside a prefix ("team-a/" read as "tea") and
 * widen it; a file renamed into place is whole and simply waits its second.
 * SIGHUP is the operator saying the file is done: it is read at once.
 */
import { existsSync, type FSWatcher, readFileSync, statSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import type { Logger } from "../runtime/log.ts";
import { loadPolicy, type Policy, type PolicyNames, parsePolicy } from "./policy-file.ts";

/** Changes to the file settle for this long before it is first looked at (an editor's write, rename and chmod come in a burst). */
const SETTLE_MS = 100;
/** How long the file must stay exactly as it is before a watched change is taken. */
export const STABLE_MS = 1_000;

/** The file as one look found it. */
interface Look {
  ino: number;
  size: number;
  mtimeMs: number;
  text: string;
}

export class PolicyHolder {
  #current: Policy;
  #watcher: FSWatcher | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Told of every policy taken (after a reload or a watched change): running jobs are judged by it. */
  onChange: ((why: string) => void) | undefined;

  constructor(
    readonly file: string,
    initial: Policy,
    private readonly names: PolicyNames,
    private readonly log: Logger,
  ) {
    this.#current = initial;
  }

  get current(): Policy {
    return this.#current;
  }

  /** Reads the file again; keeps the policy in force when it is broken. */
  reload(why: string): boolean {
    clearTimeout(this.#timer);
    return this.#take(loadPolicy(this.file, this.names), why);
  }

  #take(loaded: ReturnType<typeof loadPolicy>, why: string): boolean {
    if (!loaded.ok) {
      this.log.error(
        `policy ${this.file} not reloaded (${why}); the previous policy stays in force: ${loaded.errors.join("; ")}`,
      );
      return false;
    }
    this.#current = loaded.policy;
    this.log.info(`policy ${this.file} reloaded (${why}): ${loaded.policy.rules.length} rule(s)`);
    this.onChange?.(why);
    return true;
  }

  #look(): Look | undefined {
    try {
      const before = statSync(this.file);
      const text = readFileSync(this.file, "utf8");
      const after = statSync(this.file);
      // Written to while it was read: not a look at one file.
      if (before.ino !== after.ino || before.size !== after.size || before.mtimeMs !== after.mtimeMs) return undefined;
      return { ino: after.ino, size: after.size, mtimeMs: after.mtimeMs, text };
    } catch {
      return undefined;
    }
  }

  /** Takes the file once two looks STABLE_MS apart find it the same; any change in between starts the wait again. */
  #settle(previous: Look | undefined): void {
    const look = this.#look();
    if (
      look &&
      previous &&
      look.ino === previous.ino &&
      look.size === previous.size &&
      look.mtimeMs === previous.mtimeMs &&
      look.text === previous.text
    ) {
      this.#take(parsePolicy(look.text, this.names), "the file changed");
      return;
    }
    // Gone (moved away, about to be replaced): the event that brings it back starts a new wait.
    if (!look && !existsSync(this.file)) return;
    this.#timer = setTimeout(() => this.#settle(look), STABLE_MS);
    this.#timer.unref?.();
  }

  /** Reloads whenever the file is written, replaced or renamed into place, once it has stood still. */
  watch(): void {
    const name = basename(this.file);
    try {
      this.#watcher = watch(dirname(this.file), (_event, changed) => {
        if (changed !== null && changed !== name) return;
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => this.#settle(undefined), SETTLE_MS);
      });
      this.#watcher.unref();
    } catch (err) {
      this.log.warn(
        `policy ${this.file}: cannot watch for changes (${(err as Error).message}); send SIGHUP to reload it`,
      );
    }
  }

  close(): void {
    this.#watcher?.close();
    clearTimeout(this.#timer);
  }
}
