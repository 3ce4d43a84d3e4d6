/** Each tool's bucket and key arguments, from its card (found in its schema when the binary was built: tool-kit/addresses.ts). */

import type { ToolAddresses } from "../../tool-kit/addresses.ts";
import { EVERY_CARD } from "../../tool-registry/cards.ts";

const ADDRESSES = new Map(EVERY_CARD.map((card) => [card.name, card.addresses]));

/** The tool's addresses; undefined for a tool that names none (or no tool of that name). */
export const addressesOf = (tool: string): ToolAddresses | undefined => ADDRESSES.get(tool);
