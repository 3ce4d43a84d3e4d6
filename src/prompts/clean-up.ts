import { bucketArgument, type PromptDefinition, prefixArgument, where } from "./types.ts";

export const cleanUp: PromptDefinition = {
  name: "clean_up",
  title: "Clean up incomplete uploads and old versions",
  description:
    "What incomplete uploads and noncurrent versions cost, and a lifecycle rule to stop paying for them, applied only on your word.",
  arguments: [bucketArgument, prefixArgument],
  needs: ["storage_usage", "list_object_versions"],
  text: (args) =>
    [
      `Clean up incomplete uploads and old versions in ${where(args)}:`,
      `1. Call storage_usage with bucket_name "${args.bucket}" and prefix "${args.prefix ?? ""}": the incomplete multipart uploads (billed, but not listed as objects) and their bytes.`,
      "2. Call list_object_versions on the same bucket and prefix, following the markers, for noncurrent versions and delete markers; add up the bytes the noncurrent versions hold.",
      "3. Propose one lifecycle rule for the prefix: abort incomplete multipart uploads after 7 days, expire noncurrent versions after 30 days. Show it to me; apply it with set_bucket_lifecycle only after I confirm (the server must allow admin changes and deletes).",
      "4. Do not delete objects or versions one by one.",
    ].join("\n"),
};
