/** A workflow prompt, as data: a short recipe over the tools that a user picks from the client's prompt menu. */
export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
  /** Offered completions: bucket names, or keys and folders of the bucket argument's bucket. */
  completes?: "bucket" | "key";
}

export interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  /** The tools the recipe calls: the prompt is offered only where every one of them is. */
  needs: string[];
  /** The user message the prompt puts in the conversation (arguments as given; optional ones may be absent). */
  text(args: Record<string, string | undefined>): string;
}

/** A bucket argument, with completion. */
export const bucketArgument: PromptArgument = {
  name: "bucket",
  description: "The bucket.",
  required: true,
  completes: "bucket",
};
/** An optional prefix argument ("" or absent: the whole bucket), with completion. */
export const prefixArgument: PromptArgument = {
  name: "prefix",
  description: 'A folder (prefix) in the bucket, e.g. "logs/"; empty for all of it.',
  required: false,
  completes: "key",
};

/** `s3://bucket/prefix` as the text shows it. */
export const where = (args: Record<string, string | undefined>) => `s3://${args.bucket}/${args.prefix ?? ""}`;
