import type { ToolCard, ToolDefinition } from "./types.ts";

/** A definition's card: its static facts, its functions only said to exist. */
export function cardOf(tool: ToolDefinition): ToolCard {
  const { name, title, description, annotations, group, writesToStore, needsAllowAdmin, remoteNote, aboutJobs, storeless, sourceStore, handsBack, localFiles } = tool;
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
  };
}
