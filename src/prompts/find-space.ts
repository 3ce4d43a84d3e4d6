import { bucketArgument, type PromptDefinition, prefixArgument, where } from "./types.ts";

export const findSpace: PromptDefinition = {
  name: "find_space",
  title: "Find what takes space and what could expire",
  description:
    "Totals, the largest folders and objects, old objects, incomplete uploads; proposals only, nothing changed.",
  arguments: [bucketArgument, prefixArgument],
  needs: ["storage_usage", "find_objects"],
  text: (args) =>
    [
      `Find what takes space in ${where(args)} and what could expire:`,
      `1. Call storage_usage with bucket_name "${args.bucket}", prefix "${args.prefix ?? ""}" and depth 2: totals, the largest folders, storage classes, the largest and oldest objects, incomplete multipart uploads.`,
      `2. Call find_objects on the same bucket and prefix for objects over 100 MB (min_size 104857600), and again for objects not modified in the last year (modified_before one year ago, as a date).`,
      "3. Say how many bytes incomplete uploads hold, if any (they are billed but not listed as objects).",
      "4. Propose lifecycle rules (expire, move to a cheaper storage class, abort incomplete uploads) as a proposal only. Change nothing and delete nothing unless I ask.",
    ].join("\n"),
};
