/**
 * The one error type that storage/ and local/ throw. Tools turn it into an
 * `isError` result; every field is written for the model that has to act on it.
 */
export class ActionableError extends Error {
  /** What the failure is about: `s3://bucket/key`, `s3://bucket`, a local path, or a parameter name. */
  readonly resource: string;
  /** A stable code: the S3 error code (NoSuchKey, AccessDenied…) or one of ours (LocalFileNotFound…). */
  readonly code: string;
  /** The HTTP status the store answered with, when there was an answer. */
  readonly status: number | undefined;
  /** The next step the model can take. */
  readonly hint: string;
  /** Whether the same call may succeed if retried later. */
  readonly retryable: boolean;

  constructor(fields: {
    resource: string;
    code: string;
    message: string;
    hint: string;
    status?: number;
    retryable?: boolean;
  }) {
    super(fields.message);
    this.name = "ActionableError";
    this.resource = fields.resource;
    this.code = fields.code;
    this.status = fields.status;
    this.hint = fields.hint;
    this.retryable = fields.retryable ?? false;
  }

  /** One paragraph for the model: resource, code and status, what happened, what to do. */
  describe(): string {
    const status = this.status ? `, HTTP ${this.status}` : "";
    return `${this.resource}: ${this.code}${status}. ${this.message} Next: ${this.hint}`;
  }
}

/** An error raised because the caller cancelled the request. */
export function isAbortError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.name === "AbortError" || (err as { code?: string }).code === "ABORT_ERR";
}

/** `s3://bucket/key` (or `s3://bucket`) for messages. */
export function s3Uri(bucket: string, key?: string): string {
  return key === undefined ? `s3://${bucket}` : `s3://${bucket}/${key}`;
}
