import { z } from "zod";
import { ActionableError } from "../runtime/errors.ts";
import { bucketNameProblem } from "../tool-kit/bucket-naming.ts";
import { newBucketName } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export const createBucket = defineTool({
  name: "create_bucket",
  title: "Create bucket",
  description: "Creates an empty bucket in the configured region (names: 3-63 of a-z, 0-9, '.', '-').",
  inputSchema: z
    .object({
      bucket_name: newBucketName.describe('e.g. "team-reports-2024".'),
    })
    .strict(),
  outputSchema: z.object({ bucket: z.string(), region: z.string(), location: z.string().nullable() }),
  // Not idempotent: a second call fails with BucketAlreadyOwnedByYou.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  group: "admin",
  writesToStore: true,
  async handler(args, ctx) {
    const problem = bucketNameProblem(args.bucket_name);
    if (problem) {
      throw new ActionableError({
        resource: "bucket_name",
        code: "InvalidBucketName",
        message: `"${args.bucket_name}" is not a valid bucket name: it ${problem}.`,
        hint: "choose a name that follows the rule, e.g. lowercase words joined by hyphens.",
      });
    }
    const { location } = await ctx.storage.createBucket(args.bucket_name, ctx.signal);
    return textOutput(`Created bucket s3://${args.bucket_name} in ${ctx.region}.`, {
      bucket: args.bucket_name,
      region: ctx.region,
      location,
    });
  },
});
