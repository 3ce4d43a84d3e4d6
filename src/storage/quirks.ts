/**
 * What S3 implementations do differently, as data: one row a provider
 * (config/store-provider.ts says which a store is; STORE_PROVIDER overrides),
 * one field a difference, each read at the one place it matters. "other" is
 * a store nothing is assumed of: every tolerance on, as for the strictest
 * known store. Adding a provider is a row here (and its name there).
 *
 * A difference is a field when tolerating it costs something (a request, a
 * refusal's wording). Three cost nothing, so every store gets them and they
 * stay where they are read, each naming the stores that differ:
 * - a delimited listing resumed after a key may or may not name that key's
 *   folder (bulk/listing.ts lists it first and skips it if named again);
 * - ListBuckets may ignore MaxBuckets and its token (bucket-listing.ts cuts
 *   the page itself);
 * - an error's message may be just "UnknownError" (errors.ts leaves it out).
 */
import type { StoreProvider } from "../config/store-provider.ts";

export interface StoreQuirks {
  /** A HEAD's 404 says when the latest version is a delete marker (x-amz-delete-marker); else the key's versions are listed to tell (Ceph RGW says nothing). */
  saysDeleteMarkerOn404: boolean;
  /** CompleteMultipartUpload may answer without an ETag (Ceph RGW 16): a HEAD fetches it. */
  completeMayOmitEtag: boolean;
  /** An object's retention can be removed (PutObjectRetention without one); else the refusal's hint says to shorten it (Ceph RGW 16 takes only a mode and a date). */
  removesRetention: boolean;
  /** An encrypted object (SSE-KMS, SSE-C) copies server-side; else a refused copy's hint says to download and upload (Ceph RGW 16). */
  copiesEncryptedObjects: boolean;
  /** Creating a bucket one already owns answers 200 (S3 in us-east-1, Ceph RGW), so a HEAD asks first whether it is new. */
  createOwnedBucketSucceeds: boolean;
  /** If-None-Match: * is honoured on PutObject and CopyObject (S3 since 2024-25), so if_absent's one-request write needs no HEAD first; else a HEAD asks (Ceph RGW 16 ignores it on CopyObject). */
  conditionalWrites: boolean;
  /**
   * A body signed chunk by chunk (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) is
   * decoded and each chunk's signature checked: a streamed part goes so
   * (signed-chunks.ts), its bytes checked as they come, instead of unsigned
   * with its ETag held to our MD5. Off where not known: a store that kept
   * the frames as the bytes would store a wrong object.
   */
  signedChunks: boolean;
  /**
   * A part's ETag is the MD5 of its bytes, and a multipart object's the MD5
   * of its parts' MD5s then their count (not under KMS or a customer key):
   * a copy between two such stores keeps the source's parts and holds them to
   * the source's ETag (same-parts.ts). Off where not known: a guess wrong for
   * a store would send every copy twice.
   */
  composesPartEtags: boolean;
}

const TOLERANT: StoreQuirks = {
  saysDeleteMarkerOn404: false,
  completeMayOmitEtag: true,
  removesRetention: false,
  copiesEncryptedObjects: false,
  createOwnedBucketSucceeds: true,
  conditionalWrites: false,
  signedChunks: false,
  composesPartEtags: false,
};

export const QUIRKS: Record<StoreProvider, StoreQuirks> = {
  aws: {
    saysDeleteMarkerOn404: true,
    completeMayOmitEtag: false,
    removesRetention: true,
    copiesEncryptedObjects: true,
    createOwnedBucketSucceeds: true,
    conditionalWrites: true,
    signedChunks: true,
    composesPartEtags: true,
  },
  // Ceph RGW decodes and checks signed chunks (rgw_auth_s3's AWSv4ComplMulti; the e2e copies test it).
  ceph: { ...TOLERANT, signedChunks: true, composesPartEtags: true },
  // What is known of these is written; the rest stays tolerant until a store of theirs is tested.
  minio: { ...TOLERANT, saysDeleteMarkerOn404: true, signedChunks: true, composesPartEtags: true },
  // No versions, so no delete markers (and no ListObjectVersions to ask).
  r2: { ...TOLERANT, saysDeleteMarkerOn404: true },
  b2: TOLERANT,
  other: TOLERANT,
};

export function quirksOf(provider: StoreProvider | undefined): StoreQuirks {
  return QUIRKS[provider ?? "other"];
}

/** What a store's answer says it is: its Server header, or Ceph RGW's request id (tx…-…-zonegroup); `doctor` names it. */
export function providerOfAnswer(server: string | null, requestId?: string | null): StoreProvider | undefined {
  if (requestId && /^tx[0-9a-f]+-[0-9a-f]+-[0-9a-f]+-/.test(requestId)) return "ceph";
  if (!server) return undefined;
  const s = server.toLowerCase();
  if (s.includes("amazons3")) return "aws";
  if (s.includes("ceph")) return "ceph";
  if (s.includes("minio")) return "minio";
  if (s.includes("cloudflare")) return "r2";
  if (s.includes("backblaze") || s.includes("b2")) return "b2";
  return undefined;
}
