import type { Config } from "../config/config.ts";
import { keptTransfersIn } from "../runtime/kept-transfers.ts";
import { createSettingsStore } from "./bucket-settings.ts";
import { createBucketStore } from "./bucket-store.ts";
import { toStorageError, writeDeniedHint } from "./errors.ts";
import { createLockAndRestoreStore } from "./lock-and-restore.ts";
import { openObjectDownload } from "./object-download.ts";
import { readObjectRange } from "./object-range.ts";
import { createObjectStore } from "./objects.ts";
import { quirksOf } from "./quirks.ts";
import { lazyS3Client } from "./requests/client.ts";
import { errorContext, operationRunner } from "./requests/operation.ts";
import { copyAcrossStores } from "./transfer/cross-copy.ts";
import { isNear } from "./transfer/nearness.ts";
import { fitsOnePart } from "./transfer/part-sizes.ts";
import { uploadPartSize } from "./transfer/same-parts.ts";
import { putStreamed, STREAM_PUT_MAX, streamable } from "./transfer/streamed-put.ts";
import { uploadObject } from "./transfer/upload.ts";
import { hasKeptUpload } from "./transfer/upload-resume.ts";
import type { Storage } from "./types.ts";

/** The Storage implementation over the AWS SDK; the only place commands are sent. */
export function createS3Storage(config: Config): Storage {
  const getClient = lazyS3Client(config);
  // What this store does differently (quirks.ts): read where it matters.
  const quirks = quirksOf(config.provider);

  const operation = operationRunner(config, getClient);
  // Transfers cut short are recorded per store (its endpoint) to resume.
  const kept = keptTransfersIn(config.stateDir);
  const keptStore = config.endpointUrl ?? `aws:${config.region}`;
  const resume = { kept, store: keptStore };

  const storage: Storage = {
    ...createObjectStore(config, getClient, operation),
    ...createSettingsStore(operation),
    ...createLockAndRestoreStore(operation, quirks),
    ...createBucketStore(config, operation, quirks),
    // The operation deadline bounds the wait for the first answer's headers; bodies then have the idle timeout.
    openObjectDownload: (addr, signal, options = {}) =>
      operation(errorContext(addr), signal, (s3, send) =>
        openObjectDownload(s3, send, { addr, signal, options, idleTimeout: config.requestTimeoutMs, keptStore }),
      ),

    readObjectHead: (addr, maxBytes, signal, offset = 0, pinTo) =>
      readObjectRange(operation, addr, maxBytes, signal, offset, pinTo),

    uploadObject: async (req, signal) => {
      const ctx = {
        bucket: req.bucket,
        key: req.key,
        hints: {
          InvalidArgument: req.storageClass
            ? "the store may not offer this storage_class; call again without storage_class, or with STANDARD."
            : undefined,
          AccessDenied: writeDeniedHint(req.encryption ?? config.encryption),
        },
      };
      try {
        const s3 = await getClient();
        // A streamed PUT has no bound on its whole time, only on a stall (the request timeout).
        if (req.streamed === "whole" && req.wholeMd5)
          return await putStreamed(s3, req, req.wholeMd5, signal, config.requestTimeoutMs);
        // The same bound as the fetch client's for an answer (client.ts).
        return await uploadObject(s3, req, signal, Math.max(config.requestTimeoutMs, config.connectTimeoutMs), resume);
      } catch (err) {
        throw toStorageError(err, ctx);
      }
    },

    streamingFor: async (req, wholeMd5, signal) => {
      const s3 = await getClient();
      if (fitsOnePart(req.size) || !(await streamable(s3, req))) return undefined;
      if (!(await isNear(s3, req.bucket, signal))) return "parts";
      return wholeMd5 !== undefined && req.size <= STREAM_PUT_MAX ? "whole" : "parts";
    },

    copyFrom: (source, req, signal, nameSource) => {
      // How far the destination is decides how the bytes go out (streamingFor, uploadObject): probed beside the
      // source's first requests instead of after them (five round trips to a far store; nearness.ts keeps the answer).
      getClient()
        .then((s3) => isNear(s3, req.bucket, signal))
        .catch(() => {});
      return copyAcrossStores(source, storage, req, signal, nameSource);
    },
    hasKeptUpload: (req) => hasKeptUpload(req, resume, uploadPartSize(req, quirks)),
  };
  return storage;
}
