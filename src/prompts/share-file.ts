import { bucketArgument, type PromptDefinition } from "./types.ts";

export const shareFile: PromptDefinition = {
  name: "share_file",
  title: "Share one file for a day",
  description: "A download link that works for 24 hours without credentials.",
  arguments: [
    bucketArgument,
    { name: "key", description: 'The object\'s key, e.g. "reports/q3.pdf".', required: true, completes: "key" },
  ],
  needs: ["head_object", "presign_url"],
  text: (args) =>
    [
      `Share s3://${args.bucket}/${args.key} for one day:`,
      `1. Call head_object with bucket_name "${args.bucket}" and object_key "${args.key}": check that it exists, and note its size and type.`,
      "2. Call presign_url with the same bucket_name and object_key, method GET and expires_in 86400 (24 hours).",
      "3. Give me the link and the time it expires. Say that anyone who has the link can download the file until then, and that it can only be revoked early by disabling the credentials that signed it.",
    ].join("\n"),
};
