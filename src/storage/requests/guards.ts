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
import { saidBytes, telemetry } from "../../runtime/telemetry.ts";

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
      const result = await timed(command.replace(/Command$/, ""), () => next(args), args as Exchange);
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

/** One attempt's answer (its headers: a body streams on), timed for the store-request figure; status 0: none came. */
export async function timed<T extends { response?: unknown }>(
  operation: string,
  send: () => Promise<T>,
  exchange?: Exchange & { request?: { headers?: Record<string, string> } },
): Promise<T> {
  const started = performance.now();
  let status = 0;
  let headers: Record<string, string> | undefined;
  try {
    const result = await send();
    const response = result.response as { statusCode?: number; headers?: Record<string, string> } | undefined;
    status = response?.statusCode ?? 0;
    headers = response?.headers;
    return result;
  } finally {
    const sent = exchange?.request?.headers;
    telemetry().storeRequest(operation, status, (performance.now() - started) / 1000, {
      ...(exchange?.input?.Bucket ? { bucket: exchange.input.Bucket } : {}),
      ...saidBytes("sentBytes", sent?.["content-length"]),
      ...saidBytes("receivedBytes", headers?.["content-length"]),
      ...attemptOf(sent?.["amz-sdk-request"]),
    });
  }
}

/** The SDK's retry header (`attempt=2; max=3`): which try this is. */
function attemptOf(header: string | undefined): { attempt?: number } {
  const attempt = Number(header?.match(/attempt=(\d+)/)?.[1]);
  return attempt > 0 ? { attempt } : {};
}
