import { cleanUp } from "./clean-up.ts";
import { findSpace } from "./find-space.ts";
import { reviewExposure } from "./review-exposure.ts";
import { shareFile } from "./share-file.ts";
import type { PromptDefinition } from "./types.ts";
import { uploadFolder } from "./upload-folder.ts";

/** Every workflow prompt, in the order a client's menu shows them. */
export const PROMPTS: readonly PromptDefinition[] = [uploadFolder, findSpace, shareFile, reviewExposure, cleanUp];
export type { PromptArgument, PromptDefinition } from "./types.ts";

/** The prompts whose tools are all in `offered`. */
export function promptsFor(offered: readonly string[]): PromptDefinition[] {
  const has = new Set(offered);
  return PROMPTS.filter((p) => p.needs.every((tool) => has.has(tool)));
}
