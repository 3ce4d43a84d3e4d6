/**
 * Finding lines in a stream of text, as grep does: the text is searched a
 * block at a time (a literal with indexOf, a regular expression with RE2's
 * linear-time engine, so no pattern can run away), and only a block with a
 * match is split into lines. Lines are counted from 1; a line longer than
 * MAX_LINE is searched in pieces of that size (a match across a piece's edge
 * is missed there).
 */
import { RE2JS } from "re2js";

/** A line's text as a result carries it. */
export const LINE_TEXT_CHARS = 500;
const MAX_LINE = 1024 * 1024;

export interface LineMatch {
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

/** Where each match in `text` starts, from `from` on; the next search starts where the caller says. */
type FindFrom = (text: string, from: number) => number;

/** What names the engine in results. */
export const REGEX_ENGINE = "RE2 (re2js: linear time, no backtracking)";

/** The search for `pattern`: a literal (case folded with `ignoreCase`) or an RE2 expression. Throws RE2's syntax error for a bad one. */
export function finderFor(pattern: string, regex: boolean, ignoreCase: boolean): FindFrom {
  if (!regex && !ignoreCase) return (text, from) => text.indexOf(pattern, from);
  // An escaped literal has nothing to backtrack over: the built-in engine is safe for it.
  if (!regex) {
    const re = new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "giu");
    return (text, from) => {
      re.lastIndex = from;
      return re.exec(text)?.index ?? -1;
    };
  }
  const re = RE2JS.compile(pattern, RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0));
  return (text, from) => {
    const m = re.matcher(text);
    return m.find(from) ? m.start() : -1;
  };
}

export interface LineSearchOptions {
  find: FindFrom;
  /** Lines of context before and after each match (0-3). */
  context: number;
  /** Lines up to this one are not reported (a search resumed inside an object). */
  after: number;
  /** At most this many matches are reported; then `full` is true. */
  max: number;
}

/** Feeds text in order; collects the matching lines. */
export class LineSearch {
  readonly matches: LineMatch[] = [];
  /** Lines that matched (also past `max`, while the search goes on). */
  matchingLines = 0;
  #carry = "";
  #line = 0;
  #recent: string[] = [];
  #waitingForAfter: LineMatch[] = [];

  constructor(private readonly o: LineSearchOptions) {}

  get full(): boolean {
    return this.matches.length >= this.o.max;
  }

  /** The line number of the last line reported, when the search stopped full (where a resumed search goes on). */
  get lastReported(): number | undefined {
    return this.matches.at(-1)?.line;
  }

  push(text: string): void {
    let all = this.#carry + text;
    let cut = all.lastIndexOf("\n");
    if (cut < 0 && all.length > MAX_LINE) cut = MAX_LINE - 1;
    if (cut < 0) {
      this.#carry = all;
      return;
    }
    this.#carry = all.slice(cut + 1);
    const block = all.slice(0, cut + 1);
    all = "";
    this.#block(block, block.endsWith("\n"));
  }

  /** The text is over: its last line (without a newline) is searched too. */
  end(): void {
    if (this.#carry) this.#block(this.#carry, true);
    this.#carry = "";
    for (const m of this.#waitingForAfter) m.after ??= [];
    this.#waitingForAfter = [];
  }

  #block(block: string, endsLine: boolean): void {
    const { find, context } = this.o;
    let at = find(block, 0);
    if (at < 0 && this.#waitingForAfter.length === 0) {
      this.#line += countLines(block, endsLine);
      if (context > 0) this.#recent = [...this.#recent, ...lastLines(block, context)].slice(-context);
      return;
    }
    const lines = block.split("\n");
    if (block.endsWith("\n")) lines.pop();
    const first = this.#line;
    this.#giveAfter(lines);
    // Map each match to its line by walking the line starts once.
    let index = 0;
    let lineStart = 0;
    while (at >= 0 && index < lines.length) {
      while (index < lines.length && lineStart + lines[index]!.length < at) lineStart += lines[index++]!.length + 1;
      if (index >= lines.length) break;
      const number = first + index + 1;
      this.matchingLines++;
      if (number > this.o.after && !this.full) {
        const m: LineMatch = { line: number, text: around(lines[index]!, at - lineStart) };
        if (context > 0) {
          m.before = [...this.#recent, ...lines.slice(Math.max(0, index - context), index).map(cutLine)].slice(-context);
          const after = lines.slice(index + 1, index + 1 + context).map(cutLine);
          if (after.length === context || !endsLine) m.after = after;
          else this.#waitingForAfter.push(Object.assign(m, { after }));
        }
        this.matches.push(m);
      }
      // The next match starts on a later line: one line, one match.
      lineStart += lines[index]!.length + 1;
      index++;
      at = lineStart < block.length ? find(block, lineStart) : -1;
    }
    this.#line = first + (endsLine ? lines.length : Math.max(lines.length - 1, 0));
    if (context > 0) this.#recent = [...this.#recent, ...lines.slice(-context).map(cutLine)].slice(-context);
  }

  #giveAfter(lines: string[]): void {
    const { context } = this.o;
    this.#waitingForAfter = this.#waitingForAfter.filter((m) => {
      m.after!.push(...lines.slice(0, context - m.after!.length).map(cutLine));
      return m.after!.length < context;
    });
  }
}

function countLines(block: string, endsLine: boolean): number {
  let n = 0;
  for (let i = block.indexOf("\n"); i >= 0; i = block.indexOf("\n", i + 1)) n++;
  return endsLine && !block.endsWith("\n") ? n + 1 : n;
}

function lastLines(block: string, n: number): string[] {
  const lines = block.slice(Math.max(0, block.length - n * 4096)).split("\n");
  if (block.endsWith("\n")) lines.pop();
  return lines.slice(-n).map(cutLine);
}

const cutLine = (line: string) => around(line, 0);

/** A line cut to LINE_TEXT_CHARS, around the match when the line is longer. */
function around(line: string, at: number): string {
  if (line.length <= LINE_TEXT_CHARS) return line;
  const start = Math.max(0, Math.min(at - 100, line.length - LINE_TEXT_CHARS));
  return `${start > 0 ? "…" : ""}${line.slice(start, start + LINE_TEXT_CHARS)}…`;
}
