/** A single byte range, both ends inclusive, as Content-Range writes them. */
export interface ByteRange {
  start: number;
  end: number;
}

/** What a request asks of a representation: all of it, one range of it, or a range it does not have (416). */
export type RangeSelection = { kind: 'whole' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

const WHOLE: RangeSelection = { kind: 'whole' };

/**
 * Reads a Range header against a representation of `size` bytes (RFC 9110 §14.2). Only a single `bytes=` range is
 * served: an unknown unit, a malformed range and a multi-range set are ignored, so the client gets the whole
 * representation with 200, as the RFC asks, rather than an error it cannot act on. A well-formed range that
 * starts past the end (or any range of an empty representation) is unsatisfiable.
 * @example parseRange('bytes=-8', 100) // { kind: 'partial', range: { start: 92, end: 99 } }
 */
export function parseRange(header: string | null, size: number): RangeSelection {
  if (!header) return WHOLE;
  const match = /^bytes=[ \t]*(\d*)-(\d*)[ \t]*$/i.exec(header.trim());
  if (!match) return WHOLE;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return WHOLE;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  // A last position before the first makes the range invalid, not unsatisfiable (RFC 9110 §14.1.1).
  if (last !== '' && Number(last) < start) return WHOLE;
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) } };
}

/**
 * Whether an If-Range header lets a range through: it must name `etag` exactly (a strong comparison, so a weak
 * tag never matches). A date never matches, since these routes send no Last-Modified to compare it with.
 */
export function matchesIfRange(header: string | null, etag: string): boolean {
  if (header === null) return true;
  return header.trim() === etag && !etag.startsWith('W/');
}

/**
 * The part of a representation a request gets: ranges apply to GET only (a HEAD answers the whole length), and
 * only while If-Range, when sent, still names the representation; otherwise the whole of it.
 */
export function selectRange(request: Request, size: number, etag: string): RangeSelection {
  if (request.method !== 'GET' || !matchesIfRange(request.headers.get('if-range'), etag)) return WHOLE;
  return parseRange(request.headers.get('range'), size);
}

/** The Content-Range of a partial answer, or of a 416 when `range` is absent. */
export function formatContentRange(size: number, range?: ByteRange): string {
  return range ? `bytes ${range.start}-${range.end}/${size}` : `bytes */${size}`;
}
