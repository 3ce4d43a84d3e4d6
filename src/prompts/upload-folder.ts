import { bucketArgument, type PromptDefinition, prefixArgument, where } from "./types.ts";

export const uploadFolder: PromptDefinition = {
  name: "upload_folder",
  title: "Put a local folder into a bucket safely",
  description: "A dry run first, your confirmation, then the upload; resumes if cut off.",
  arguments: [
    { name: "local_dir", description: 'The local folder, e.g. "./site".', required: true },
    bucketArgument,
    prefixArgument,
  ],
  needs: ["upload_directory"],
  text: (args) =>
    [
      `Upload the local folder ${args.local_dir} to ${where(args)}, safely:`,
      `1. Call upload_directory with local_dir "${args.local_dir}", bucket_name "${args.bucket}", prefix "${args.prefix ?? ""}" and dry_run: true. Show me what it would upload (how many files, how many bytes, a few names) and what it would skip.`,
      "2. Ask me to confirm. Only then call upload_directory again without dry_run. Do not use delete_extraneous unless I ask for a mirror.",
      '3. If the answer is a job (job.state "running"), follow its next with job_status until it ends. If a call is cut off, call upload_directory again with the same arguments: it goes on where it stopped.',
      "4. Tell me what was uploaded, what was already there unchanged, and any failure with its error code.",
    ].join("\n"),
};
