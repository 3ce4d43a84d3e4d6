/**
 * Middleware on every S3 client that protects the process from the store:
 * answers that are not object bodies are read up to a cap (a hostile or broken
 * store could otherwise send gigabytes of XML to be parsed whole), and the
 * credentials each request was signed with, wherever they came from, are
 * registered for scrubbing before any error can echo them.
 */

import { type Readable, Transform } from "node:stream";
import type { S3Client } from "@aws-sdk/client-s3";
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import { registerResolvedCredentials } from "../../runtime/redact.ts";
import { type StoreRequestDetail, saidBytes, timedStoreRequest } from "../../runtime/telemetry.ts";

/** The most a listing, error or other non-object answer may be: a full 1,000-key page of 1 KiB keys, escaped, fits. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

interface Exchange {
  request?: { hostname?: string; port?: number; protocol?: string };
  input?: { Bucket?: string; Key?: string };
}

type Body = Readable | ReadableStream<Uint8Array> | Uint8Array | undefined;

export function tooLarge(command: string, exchange: Exchange, cap: number): ActionableError {
  const req = exchange.request ?? {};
  const store = `${req.protocol ?? "http:"}//${req.hostname ?? "?"}${req.port ? `:${req.port}` : ""}`;
  return new ActionableError({
    resource: exchange.input?.Bucket ? s3Uri(exchange.input.Bucket, exchange.input.Key) : "s3",
    code: "ResponseTooLarge",
    message: `The store at ${store} answered ${command.replace(/Command$/, "")} with more than ${cap} bytes, which no well-behaved S3 store sends; the answer was dropped unread.`,
    hint: "use a smaller max_keys or a narrower prefix; if it persists, the endpoint is not a working S3 store (check STORE_ENDPOINT_URL).",
  });
}

/** Passes at most `cap` bytes of `body` on, then fails it with `error()`. Node streams, web streams and bytes alike. */
export function capBody(body: Body, cap: number, error: () => Error): Body {
  if (!body) return body;
  // Already read whole (a listing page read by fast-list.ts).
  if (body instanceof Uint8Array) {
    if (body.byteLength > cap) throw error();
    return body;
  }
  let seen = 0;
  if (typeof (body as ReadableStream).getReader === "function") {
    return (body as ReadableStream<Uint8Array>).pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > cap) controller.error(error());
          else controller.enqueue(chunk);
        },
      }),
    );
  }
  const source = body as Readable;
  const capped = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > cap) {
        source.destroy();
        done(error());
      } else done(null, chunk);
    },
  });
  source.on("error", (err) => capped.destroy(err));
  return source.pipe(capped);
}

/**
 * A body with neither a Content-Length nor chunked framing ends when the
 * connection closes, so a cut cannot be told from the end: such an object
 * body is refused before anything is read.
 */
function closeDelimited(headers: Record<string, string>): boolean {
  const get = (name: string) => Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return get("content-length") === undefined && !/chunked/i.test(get("transfer-encoding") ?? "");
}

function unverifiable(exchange: Exchange): ActionableError {
  return new ActionableError({
    resource: exchange.input?.Bucket ? s3Uri(exchange.input.Bucket, exchange.input.Key) : "s3",
    code: "UnverifiableBody",
    message:
      "The store sent the object with neither a Content-Length nor chunked framing, so whether it arrived whole cannot be checked; nothing was kept.",
    hint: "retry; if it keeps happening, the endpoint (or a proxy in front of it) is not behaving like an S3 store.",
  });
}

/** Installs the guards on a client. */
export function guardClient(client: S3Client, cap = MAX_RESPONSE_BYTES): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const smithy = (
        context as { __smithy_context?: { selectedHttpAuthScheme?: { identity?: Record<string, string> } } }
      ).__smithy_context;
      const identity = smithy?.selectedHttpAuthScheme?.identity;
      if (identity) registerResolvedCredentials(identity);
      const command = (context as { commandName?: string }).commandName ?? "request";
      const exchange = args as Exchange & { request?: { headers?: Record<string, string> } };
      const result = await timedStoreRequest(
        command.replace(/Command$/, ""),
        () => next(args),
        (r) => {
          const answer = r.response as { statusCode?: number; headers?: Record<string, string> } | undefined;
          return { status: answer?.statusCode ?? 0, length: answer?.headers?.["content-length"] };
        },
        () => spanDetail(exchange),
      );
      const response = result.response as { statusCode?: number; body?: Body; headers?: Record<string, string> };
      const objectBody = command === "GetObjectCommand" && (response?.statusCode ?? 500) < 300;
      // Object bodies stream to their caller, which bounds and verifies them; everything else is capped.
      if (response && !objectBody) {
        response.body = capBody(response.body, cap, () => tooLarge(command, args as Exchange, cap));
      }
      if (objectBody && closeDelimited(response.headers ?? {})) {
        (response.body as { destroy?(): void } | undefined)?.destroy?.();
        throw unverifiable(args as Exchange);
      }
      return result;
    },
    // Innermost: below the deserializer, so it sees the raw answer before it is parsed.
    { step: "deserialize", priority: "low", name: "storeMcpResponseGuard" },
  );
}

/** A store request's bucket, body size and attempt (the SDK's retry header, `attempt=2; max=3`), for its span. */
function spanDetail(exchange: Exchange & { request?: { headers?: Record<string, string> } }): StoreRequestDetail {
  const sent = exchange.request?.headers;
  const attempt = Number(sent?.["amz-sdk-request"]?.match(/attempt=(\d+)/)?.[1]);
  return {
    ...(exchange.input?.Bucket ? { bucket: exchange.input.Bucket } : {}),
    ...saidBytes("sentBytes", sent?.["content-length"]),
    ...(attempt > 0 ? { attempt } : {}),
  };
}
