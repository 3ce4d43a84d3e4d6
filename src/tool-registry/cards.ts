/**
 * The tools as cards (types.ts ToolCard): what offering and listing need,
 * computed from the definitions when the binary is built (cards.macro.ts),
 * so a start loads no tool module. The definitions load on the first call.
 */

import type { ToolCard } from "../tool-kit/types.ts";
import { builtToolCards } from "./cards.macro.ts" with { type: "macro" };

const BUILT = builtToolCards();

/** Every tool's card; the lists as in index.ts. */
export const EVERY_CARD: readonly ToolCard[] = BUILT.every;
export const ALL_CARDS: readonly ToolCard[] = BUILT.every.filter((c) => BUILT.all.includes(c.name));
export const STORE_CARDS: readonly ToolCard[] = BUILT.every.filter((c) => BUILT.stores.includes(c.name));
export const JOB_CARDS: readonly ToolCard[] = BUILT.every.filter((c) => BUILT.jobs.includes(c.name));
