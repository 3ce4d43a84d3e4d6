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
    // Lines before the first match (and between matches) are only counted; a matching line and its context are cut out.
    let counted = 0;
    let line = this.#line;
    if (this.#waitingForAfter.length > 0) this.#giveAfter(block);
    for (let at = find(block, 0); at >= 0; ) {
      const start = block.lastIndexOf("\n", at - 1) + 1;
      let end = block.indexOf("\n", at);
      if (end < 0) end = block.length;
      line += newlines(block, counted, start);
      counted = start;
      const number = line + 1;
      this.matchingLines++;
      if (number > this.o.after && !this.full) {
        const m: LineMatch = { line: number, text: around(block.slice(start, end), at - start) };
        if (context > 0) {
          m.before = [...this.#recent, ...linesBefore(block, start, context)].slice(-context);
          const after = linesAfter(block, end, context);
          if (after.length === context || !endsLine) m.after = after;
          else this.#waitingForAfter.push(Object.assign(m, { after }));
        }
        this.matches.push(m);
      }
      // One line, one match: the next is looked for from the next line on.
      at = end + 1 < block.length ? find(block, end + 1) : -1;
    }
    line += countLines(counted === 0 ? block : block.slice(counted), endsLine);
    this.#line = line;
    if (context > 0) this.#recent = [...this.#recent, ...lastLines(block, context)].slice(-context);
  }

  /** Matches still short of lines after them get this block's first lines. */
  #giveAfter(block: string): void {
    const { context } = this.o;
    const first = linesAfter(block, -1, context);
    this.#waitingForAfter = this.#waitingForAfter.filter((m) => {
      m.after!.push(...first.slice(0, context - m.after!.length));
      return m.after!.length < context;
    });
  }
}

/** Newlines in block[from, to). */
function newlines(block: string, from: number, to: number): number {
  let n = 0;
  for (let i = block.indexOf("\n", from); i >= 0 && i < to; i = block.indexOf("\n", i + 1)) n++;
  return n;
}

/** Up to `n` whole lines ending just before `start` (the start of a line). */
function linesBefore(block: string, start: number, n: number): string[] {
  const out: string[] = [];
  let end = start - 1;
  while (out.length < n && end >= 0) {
    const from = block.lastIndexOf("\n", end - 1) + 1;
    out.unshift(cutLine(block.slice(from, end)));
    end = from - 1;
  }
  return out;
}

/** Up to `n` whole lines after the newline at `end` (-1: from the block's start); a last line without its newline counts. */
function linesAfter(block: string, end: number, n: number): string[] {
  const out: string[] = [];
  let from = end + 1;
  while (out.length < n && from < block.length) {
    let to = block.indexOf("\n", from);
    if (to < 0) to = block.length;
    out.push(cutLine(block.slice(from, to)));
    from = to + 1;
  }
  return out;
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

/**
 * A string of its own. A slice of a string (and a concatenation holding one) keeps the whole string it was cut from
 * alive: a match kept from a 1 MiB window would keep the window (test/unit/content/line-search.test.ts measures the
 * heap). JSON's round trip copies exactly, lone surrogates included.
 */
const detached = (s: string): string => JSON.parse(JSON.stringify(s));

/** A line cut to LINE_TEXT_CHARS, around the match when the line is longer; a copy, not a slice of the block. */
function around(line: string, at: number): string {
  if (line.length <= LINE_TEXT_CHARS) return detached(line);
  const start = Math.max(0, Math.min(at - 100, line.length - LINE_TEXT_CHARS));
  return detached(`${start > 0 ? "…" : ""}${line.slice(start, start + LINE_TEXT_CHARS)}…`);
}
