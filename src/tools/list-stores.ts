import { z } from "zod";
import { defineTool, textOutput } from "../tool-kit/types.ts";

/** Offered only when the server has several stores (stores.ts); every other tool then takes `store`. */
export const listStores = defineTool({
  name: "list_stores",
  title: "List stores",
  description:
    "Lists the object stores this server can use (pass one as store to any tool; the first is the default): endpoint, region, AWS or not, read-only, deletes allowed, bucket allowlist. Never a credential.",
  inputSchema: z.object({}).strict(),
  outputSchema: z.object({
    stores: z.array(
      z.object({
        name: z.string(),
        default: z.boolean(),
        endpoint: z.string(),
        aws: z.boolean(),
        region: z.string(),
        credentials_from: z.string(),
        read_only: z.boolean(),
        allow_delete: z.boolean(),
        buckets: z.array(z.string()).nullable(),
      }),
    ),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  group: "read",
  storeless: true,
  writesToStore: false,
  async handler(_args, ctx) {
    const stores = (ctx.stores ?? []).map((s, i) => {
      const host = s.endpointUrl ? new URL(s.endpointUrl).host : "AWS S3";
      return {
        name: s.name,
        default: i === 0,
        endpoint: host,
        aws: !s.endpointUrl || /(^|\.)amazonaws\.com(\.cn)?$/.test(new URL(s.endpointUrl).hostname),
        region: s.region,
        credentials_from: s.credentialSource,
        read_only: s.readOnly,
        allow_delete: s.allowDelete,
        buckets: s.buckets.length > 0 ? s.buckets : null,
      };
    });
    const lines = stores.map(
      (s) =>
        `${s.name}${s.default ? " (default)" : ""}: ${s.endpoint}, ${s.region}${s.read_only ? ", read-only" : ""}${s.allow_delete ? ", deletes allowed" : ""}${s.buckets ? `, buckets ${s.buckets.join(", ")}` : ""}`,
    );
    return textOutput(`${stores.length} store(s); pass store: NAME to any tool:\n${lines.join("\n")}`, { stores });
  },
});
