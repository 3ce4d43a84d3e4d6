/**
 * fetch with the body as the server sent it: Bun's fetch inflates a Content-Encoding: gzip answer by default (an
 * option of fetch, not of Request), and an object stored that way is its gzip bytes — its Content-Length, its MD5 —
 * not their inflation (a download of one failed as IncompleteBody).
 */
export const storedBytes = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> =>
  fetch(input, { ...init, decompress: false } as RequestInit);
