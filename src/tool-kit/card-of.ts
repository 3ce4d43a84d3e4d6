import { addressesOf } from "./addresses.ts";
import type { ToolCard, ToolDefinition } from "./types.ts";

/** A definition's card: its static facts, its functions only said to exist. */
export function cardOf(tool: ToolDefinition): ToolCard {
  const {
    name,
    title,
    description,
    annotations,
    group,
    writesToStore,
    needsAllowAdmin,
    remoteNote,
    aboutJobs,
    storeless,
    sourceStore,
    handsBack,
    localFiles,
  } = tool;
  const addresses = addressesOf(tool.inputSchema);
  const named =
    addresses.bucket.length + addresses.key.length + addresses.sourceBucket.length + addresses.sourceKey.length > 0;
  return {
    name,
    title,
    description,
    annotations,
    group,
    writesToStore,
    ...(needsAllowAdmin ? { needsAllowAdmin } : {}),
    ...(remoteNote ? { remoteNote } : {}),
    ...(aboutJobs ? { aboutJobs } : {}),
    ...(storeless ? { storeless } : {}),
    ...(sourceStore ? { sourceStore } : {}),
    ...(handsBack ? { handsBack: true as const } : {}),
    ...(localFiles ? { localFiles: localFiles === "always" ? ("always" as const) : ("sometimes" as const) } : {}),
    ...(named ? { addresses } : {}),
  };
}
