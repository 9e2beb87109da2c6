/**
 * parquet-wasm 0.8 fetches through the global `fetch`, which is the one place to see its requests. While a
 * preview reads, the requests for that one file are watched here, for two reasons:
 * - `ParquetFile.fromUrl` asks for the footer with a suffix range (`Range: bytes=-8`), and some static servers
 *   get suffix ranges wrong: sirv 3, for one, answers `bytes=-8` with the file's first nine bytes, and the read
 *   fails with "Corrupt footer". Once the file's size is known a suffix range says nothing an explicit one
 *   cannot, so it goes out as `bytes=<size-N>-<size-1>`, which every server that honours Range answers right.
 * - The status line says how much of the file was read, and resource timing cannot tell (it reports 0 bytes
 *   for other origins without Timing-Allow-Origin, and for every request in headless Chromium).
 */

/** What the watched reads fetched of the file. */
export interface RangeTally {
  requests: number;
  /** Body bytes, from each response's Content-Length; null once a response did not say. */
  bytes: number | null;
}

/**
 * Runs `read` while every `fetch` of `url` is counted into `tally`, and, when `size` is known, suffix ranges
 * are rewritten as explicit ones. Other requests pass through untouched.
 * @example const file = await watchRanges(url, probe.size, tally, () => ParquetFile.fromUrl(url));
 */
export async function watchRanges<T>(url: string, size: number | null, tally: RangeTally, read: () => Promise<T>): Promise<T> {
  const original = globalThis.fetch;
  const watched = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if ((input instanceof Request ? input.url : String(input)) !== url) return original(input, init);
    const response = await original(size === null ? new Request(input, init) : rewriteSuffixRange(new Request(input, init), size));
    countResponse(tally, response);
    return response;
  };
  globalThis.fetch = watched;
  try {
    return await read();
  } finally {
    // Whoever replaced fetch after us keeps their own.
    if (globalThis.fetch === watched) globalThis.fetch = original;
  }
}

/** Adds one response to a tally. */
export function countResponse(tally: RangeTally, response: Response): void {
  const length = response.headers.get('content-length');
  tally.requests++;
  tally.bytes = tally.bytes === null || length === null ? null : tally.bytes + Number(length);
}

function rewriteSuffixRange(request: Request, size: number): Request {
  const suffix = /^bytes=-(\d+)$/.exec(request.headers.get('range') ?? '');
  if (!suffix) return request;
  const headers = new Headers(request.headers);
  headers.set('range', `bytes=${Math.max(0, size - Number(suffix[1]))}-${size - 1}`);
  return new Request(request, { headers });
}
