/**
 * The OGC-style `bbox` and `datetime` parameters, read once for every surface that takes them (STAC API GET and
 * POST, OGC API - Features). Each surface wraps these readers in its own codec and description; the rules live here.
 */

/** [west, south, east, north] in WGS 84 longitude/latitude; west > east crosses the antimeridian. */
export type Bbox2d = [west: number, south: number, east: number, north: number];

/** A time filter: its inclusive bounds in epoch milliseconds (null: open) and the text as given, for links. */
export interface TimeInterval {
  start: number | null;
  end: number | null;
  text: string;
}

/** The value read, or why it cannot be; the detail is worded to follow the parameter's name. */
export type ExtentRead<T> = { ok: true; value: T } | { ok: false; detail: string };

/**
 * Reads a bbox of 4 numbers, or 6 whose heights are dropped (every footprint is at height 0): finite, longitudes
 * in [-180, 180], latitudes in [-90, 90], south ≤ north. Only west may exceed east, for a box across ±180°.
 * @example readBbox([0, 40, -100, 20, 60, 100]) // { ok: true, value: [0, 40, 20, 60] }
 */
export function readBbox(numbers: readonly number[]): ExtentRead<Bbox2d> {
  if (numbers.length !== 4 && numbers.length !== 6) return { ok: false, detail: `must have 4 numbers (west,south,east,north) or 6 (with heights), got ${numbers.length}` };
  if (!numbers.every(Number.isFinite)) return { ok: false, detail: 'must be finite numbers' };
  const box: Bbox2d = numbers.length === 6 ? [numbers[0]!, numbers[1]!, numbers[3]!, numbers[4]!] : [numbers[0]!, numbers[1]!, numbers[2]!, numbers[3]!];
  const [west, south, east, north] = box;
  if ([west, east].some((lon) => lon < -180 || lon > 180)) return { ok: false, detail: 'longitudes must be from -180 to 180' };
  if ([south, north].some((lat) => lat < -90 || lat > 90)) return { ok: false, detail: 'latitudes must be from -90 to 90' };
  if (south > north) return { ok: false, detail: `south (${south}) must not be greater than north (${north}); only west may be greater than east, for a box crossing the antimeridian` };
  return { ok: true, value: box };
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/** Reads a bbox written as comma-separated numbers (a query parameter), by the rules of `readBbox`. */
export function readBboxText(text: string): ExtentRead<Bbox2d> {
  const parts = text.split(',').map((part) => part.trim());
  if (!parts.every((part) => NUMBER.test(part))) return { ok: false, detail: `must be numbers separated by commas, got "${text.slice(0, 80)}"` };
  return readBbox(parts.map(Number));
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;
/** The instants a bound may name: four-digit years, in UTC too (an offset must not carry a year past 9999). */
const [EARLIEST, LATEST] = [Date.parse('0000-01-01T00:00:00Z'), Date.parse('9999-12-31T23:59:59.999Z')];

/**
 * Reads a datetime filter: an RFC 3339 date-time, or a full date standing for its whole UTC day; or an interval
 * `start/end` of those where one end may be open (`..` or empty), never both. Any case; bounds inclusive, to the
 * millisecond; a 31 February or an hour 24 is refused.
 * @example readDatetime('2026-01-01/..') // { ok: true, value: { start: 1767225600000, end: null, text: '2026-01-01/..' } }
 */
export function readDatetime(given: string): ExtentRead<TimeInterval> {
  const text = given.trim();
  const parts = text.toUpperCase().split('/');
  const expected = `must be an RFC 3339 date-time such as 2026-11-22T00:00:00Z, a date such as 2026-11-22 (its whole UTC day), or an interval start/end where one end may be .. (open); got "${text.slice(0, 80)}"`;
  if (parts.length > 2) return { ok: false, detail: expected };
  if (parts.length === 1) {
    const [start, end] = [readBound(parts[0]!, 'start'), readBound(parts[0]!, 'end')];
    return start === null || end === null || Number.isNaN(start) || Number.isNaN(end) ? { ok: false, detail: expected } : { ok: true, value: { start, end, text } };
  }
  const [start, end] = [readBound(parts[0]!, 'start'), readBound(parts[1]!, 'end')];
  if (Number.isNaN(start) || Number.isNaN(end)) return { ok: false, detail: expected };
  if (start === null && end === null) return { ok: false, detail: 'must not be open at both ends; leave datetime out to match every time' };
  if (start !== null && end !== null && start > end) return { ok: false, detail: 'interval must not end before it starts' };
  return { ok: true, value: { start, end, text } };
}

/**
 * One bound in epoch milliseconds: null when open (`..` or empty), NaN when it is no valid date-time or date. A
 * date starts at its first millisecond (UTC) and ends at its last, by `side`. A leap second reads as second 59.
 */
function readBound(text: string, side: 'start' | 'end'): number | null {
  if (text === '' || text === '..') return null;
  const date = FULL_DATE.exec(text);
  const time = date ? null : DATE_TIME.exec(text);
  const fields = (date ?? time)?.map((field) => Number(field ?? 0));
  if (!fields || !isCalendarDate(fields[1]!, fields[2]!, fields[3]!)) return Number.NaN;
  if (time && (fields[4]! > 23 || fields[5]! > 59 || fields[6]! > 60 || fields[9]! > 23 || fields[10]! > 59)) return Number.NaN;
  const instant = date ? Date.parse(`${text}T00:00:00Z`) + (side === 'end' ? DAY_MS - 1 : 0) : Date.parse(text.replace(/:60(?=[.Z+-])/, ':59'));
  return instant >= EARLIEST && instant <= LATEST ? instant : Number.NaN;
}

/** Whether a year, month and day name a day of the Gregorian calendar (no 31 February, no 29 February 2100). */
function isCalendarDate(year: number, month: number, day: number): boolean {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days;
}
