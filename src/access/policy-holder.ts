/**
 * The policy in force, reloaded on SIGHUP (remote.ts calls `reload`) and
 * when the file changes (its directory is watched: editors and config
 * management replace a file rather than write it in place). A file that
 * does not parse or validate leaves the previous policy in force, and the
 * log says why; every request takes the policy in force when it starts.
 */
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import type { Logger } from "../runtime/log.ts";
import { loadPolicy, type Policy, type PolicyNames } from "./policy-file.ts";

/** Changes to the file settle for this long before it is read (an editor's write, rename and chmod come in a burst). */
const SETTLE_MS = 100;

export class PolicyHolder {
  #current: Policy;
  #watcher: FSWatcher | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

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
    const loaded = loadPolicy(this.file, this.names);
    if (!loaded.ok) {
      this.log.error(`policy ${this.file} not reloaded (${why}); the previous policy stays in force: ${loaded.errors.join("; ")}`);
      return false;
    }
    this.#current = loaded.policy;
    this.log.info(`policy ${this.file} reloaded (${why}): ${loaded.policy.rules.length} rule(s)`);
    return true;
  }

  /** Reloads whenever the file is written, replaced or renamed into place. */
  watch(): void {
    const name = basename(this.file);
    try {
      this.#watcher = watch(dirname(this.file), (_event, changed) => {
        if (changed !== null && changed !== name) return;
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => this.reload("the file changed"), SETTLE_MS);
      });
      this.#watcher.unref();
    } catch (err) {
      this.log.warn(`policy ${this.file}: cannot watch for changes (${(err as Error).message}); send SIGHUP to reload it`);
    }
  }

  close(): void {
    this.#watcher?.close();
    clearTimeout(this.#timer);
  }
}
