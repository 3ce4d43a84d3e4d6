/**
 * The bytes of an upload's body as they go out, for progress that moves
 * while a part is in flight (with twelve 5 MiB parts in flight to a far
 * store, counting completed parts says nothing for the first 60 MiB). A Blob
 * body registered here is sent as a stream of its own chunks, each counted
 * when fetch takes it; every attempt (the SDK retries) reads the Blob afresh
 * and counts from 0 again. Bodies not registered go as they are.
 */
const counters = new WeakMap<Blob, (sentThisAttempt: number) => void>();

/** Registers `body` so that `onSent` hears how many of its bytes the current attempt has handed to the connection. */
export function countSent(body: Blob, onSent: (sentThisAttempt: number) => void): Blob {
  counters.set(body, onSent);
  return body;
}

/** The fetch handler's per-attempt request options: a counted stream in place of a registered Blob body. */
export function countedBody(request: { body?: unknown }): { body?: ReadableStream<Uint8Array> } {
  const blob = request.body;
  const onSent = blob instanceof Blob ? counters.get(blob) : undefined;
  if (!onSent || !(blob instanceof Blob)) return {};
  // A fresh Blob each attempt: after an attempt cut by a reset, Bun hands the same Blob's locked stream again, and
  // the SDK's retry failed as "ReadableStream is locked" (faults.test's healed cut).
  const reader = blob.slice().stream().getReader();
  onSent(0);
  let sent = 0;
  return {
    body: new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          sent += value.byteLength;
          onSent(sent);
          controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    ),
  };
}
