/**
 * Whether a store is near (loopback, a LAN) or far (across the internet),
 * from how fast it answers a HEAD of the bucket: what decides between one
 * streamed PUT and parts for a copy between stores (streamed-put.ts), keeps
 * buffered parts from multiplying when a loaded machine makes a near store's
 * parts look slow (upload.ts), a copy's download from fetching several
 * ranges at once when its first range looked slow for the same reason, and
 * any download from reading a far store in one stream when its first range
 * looked fast because the process was busy as it came (ranged.ts).
 */
import type { S3Handle } from "../requests/client.ts";
import { bounded, EMPTY_SHA256, signQuick } from "../requests/quick-transport.ts";

/**
 * A store answering a HEAD this fast is near: loopback and a LAN answer in a
 * few milliseconds, the WAN model (a 20 ms round trip) and the internet in
 * more than one round trip. The time includes this process's own event loop,
 * busy with the copy's first range as the probe runs, so the bound leaves
 * room for a loaded machine, and each HEAD is signed before it is timed: what
 * is timed is the round trip and this process's answer to it, not the CPU of
 * building a request (through the SDK, on two busy cores, alone past the bound).
 */
const NEAR_MS = 12;
/**
 * HEADs at most (the first may pay for a connection or credentials; one fast answer is enough, so only a store that
 * looks far pays for all of them: a few round trips before a copy to it). Three were seen to miss on a loaded machine,
 * judging a loopback store far.
 */
const TRIES = 5;
/** A HEAD unanswered this long is far enough (an unreachable store then fails in the parts' own requests). */
const PROBE_MS = 1000;
/** How long a store's measured nearness is trusted (a prefix of large objects probes once a minute). */
const NEARNESS_TTL_MS = 60_000;
const nearness = new WeakMap<S3Handle, Map<string, { near: Promise<boolean>; at: number }>>();

/** The fastest of up to three HEADs of the bucket, remembered a while; calls at once share one probe. */
export function isNear(s3: S3Handle, bucket: string, signal?: AbortSignal): Promise<boolean> {
  let known = nearness.get(s3);
  if (!known) nearness.set(s3, (known = new Map()));
  const seen = known.get(bucket);
  if (seen && performance.now() - seen.at < NEARNESS_TTL_MS) return seen.near;
  const near = probe(s3, bucket, signal);
  known.set(bucket, { near, at: performance.now() });
  // A probe cut short by its caller's cancel tells nothing: the next call probes again.
  near.catch(() => {
    if (known.get(bucket)?.near === near) known.delete(bucket);
  });
  return near;
}

async function probe(s3: S3Handle, bucket: string, signal?: AbortSignal): Promise<boolean> {
  let fastest = Infinity;
  for (let i = 0; i < TRIES && fastest >= NEAR_MS; i++) {
    // Signed before the clock starts; the SDK's own HEAD where this cannot address the bucket.
    const head = await signQuick(s3, { method: "HEAD", bucket, headers: { "x-amz-content-sha256": EMPTY_SHA256 } });
    const bound = bounded(signal, PROBE_MS);
    const started = performance.now();
    // Only the time is wanted: whatever the store answers (even a refusal) took a round trip; no answer at all (a
    // connection refused at once) says nothing of its distance.
    const answered = await (head
      ? head(bound.signal).then((r) => void r.body?.cancel())
      : sdkHead(s3, bucket, bound.signal).catch((e: { $metadata?: { httpStatusCode?: number } }) => {
          if (!e.$metadata?.httpStatusCode) throw e;
        })
    ).then(
      () => true,
      () => false,
    );
    bound.done();
    signal?.throwIfAborted();
    if (answered) fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest < NEAR_MS;
}

const sdkHead = (s3: S3Handle, bucket: string, signal: AbortSignal) =>
  s3.fetchClient.send(new s3.sdk.HeadBucketCommand({ Bucket: bucket }), { abortSignal: signal });
