import { bucketArgument, type PromptDefinition } from "./types.ts";

export const reviewExposure: PromptDefinition = {
  name: "review_exposure",
  title: "Review a bucket's public exposure and settings",
  description: "Who can read or write what, and what is risky; fixes proposed, nothing changed.",
  arguments: [bucketArgument],
  needs: ["get_bucket_settings"],
  text: (args) =>
    [
      `Review the exposure and settings of the bucket ${args.bucket}:`,
      `1. Call get_bucket_settings with bucket_name "${args.bucket}": its policy (and what it makes public), public access block, object ownership, CORS, versioning, encryption, object lock and lifecycle.`,
      "2. Explain in plain words who can read, list or write what, and what is risky: public reads or writes, CORS open to every origin, no encryption, no versioning on data that matters.",
      "3. Propose concrete fixes, each naming the tool that would apply it (set_bucket_policy, delete_bucket_policy, set_bucket_cors, set_bucket_versioning, set_bucket_lifecycle). Change nothing unless I say so.",
    ].join("\n"),
};
