import { formatBytes } from '../../format.ts';
import { PreviewError } from './preview-error.ts';
import { countResponse, type RangeTally } from './watch-ranges.ts';

/** What one four-byte range request told about the file and its host. */
export interface RangeProbe {
  /** The whole file's size in bytes, when the host said (Content-Range on a 206, Content-Length on a 200). */
  size: number | null;
  /** The whole file, when the host ignored `Range` and the file was small enough to read whole; else null. */
  body: Uint8Array | null;
}

/** The largest file the preview downloads whole when its host does not answer range requests. */
export const FULL_READ_LIMIT_BYTES = 20_000_000;

const PARQUET_MAGIC = 'PAR1';

/**
 * Asks for the file's first four bytes with `Range: bytes=0-3`, before parquet-wasm is let loose on it:
 * parquet-wasm 0.8 unwraps HTTP errors (a wasm panic, after which its promise may never settle) and trusts
 * that the bytes it gets are the range it asked for, so every such case is caught here and turned into a
 * sentence. A 206 means ranges work; a 200 means the host sent the whole file, which is kept when small and
 * refused, with the body cancelled, when large. The response is counted into `tally`.
 * @throws PreviewError when the host cannot be reached, answers an error, or the file is not Parquet.
 */
export async function probeRanges(url: string, tally: RangeTally): Promise<RangeProbe> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { range: 'bytes=0-3' } });
  } catch {
    throw new PreviewError('The data file could not be reached: the host did not answer, or did not allow this page to read it (CORS).');
  }
  countResponse(tally, response);
  if (response.status === 404) throw new PreviewError('The data file is missing from its host (HTTP 404).');
  if (!response.ok) throw new PreviewError(`The data file's host answered HTTP ${response.status} instead of the file.`);
  if (response.status === 206) {
    assertParquet(new Uint8Array(await response.arrayBuffer()));
    return { size: sizeFromContentRange(response.headers.get('content-range')), body: null };
  }
  const length = Number(response.headers.get('content-length') ?? NaN);
  const body = await readCapped(response, FULL_READ_LIMIT_BYTES);
  if (!body) {
    const size = Number.isFinite(length) ? ` ${formatBytes(length)}` : '';
    throw new PreviewError(`The data file's host does not answer HTTP range requests, so a preview would download the whole${size} file. Download it instead.`);
  }
  assertParquet(body);
  return { size: body.byteLength, body };
}

function sizeFromContentRange(header: string | null): number | null {
  const total = header?.match(/\/(\d+)\s*$/)?.[1];
  return total === undefined ? null : Number(total);
}

// Reads a body whole unless it passes `limit`, in which case the download is cancelled and null returned.
async function readCapped(response: Response, limit: number): Promise<Uint8Array | null> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > limit || !response.body) {
    await response.body?.cancel();
    return null;
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (let part = await reader.read(); !part.done; part = await reader.read()) {
    total += part.value.byteLength;
    if (total > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(part.value);
  }
  const whole = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}

function assertParquet(head: Uint8Array): void {
  if (String.fromCharCode(...head.subarray(0, 4)) !== PARQUET_MAGIC) throw new PreviewError('The data file is not a Parquet file: it does not start with PAR1.');
}
