/**
 * Hand-written, and kept after a comparison with npm libraries (`npm run bench -- wkt`; BENCHMARKS.md, "WKT reading
 * and the Hilbert index"). Of 33 cases (the spellings CSV files carry, and text to refuse), ours gets 31,
 * @terraformer/wkt 2.2.2 28, wkx 0.5.0 27, betterknown 1.2.0 23, wellknown 0.5.0 15. wkx and betterknown accept
 * trailing text and read `POINT (a b)` as NaN; both refuse line breaks and GDAL's `POINT (1 2 3)`; wkx refuses
 * lower case; betterknown turns EMPTY into null. terraformer refuses lower case, EWKT and `+1`, and is 3–17× slower.
 * wellknown returns null and gives no reason. Only ours and terraformer say where the text goes wrong, which
 * convert's "row N: … is not WKT (reason)" needs. Ours is not the fastest: wkx and betterknown read 1M point WKTs
 * in 0.37–0.63× its time and 100k polygons of 50 vertices in 0.45–0.63× (medians of 5 rounds, four runs). Since
 * that comparison, ours also refuses `POINT (1 2, 3 4)` and five ordinates, which it used to read silently.
 */
import type { Geometry, Position } from './wkb.ts';

/**
 * Reads OGC Well-Known Text (Simple Features 1.2.1) into a 2D GeoJSON geometry, as `wkt.ts` writes it and as CSV
 * files carry geometries: `POINT (1 2)`, `MULTIPOINT (1 2, 3 4)` or `((1 2), (3 4))`, `POLYGON EMPTY`, Z/M/ZM
 * tags (extra ordinates are dropped) and a PostGIS `SRID=4326;` prefix.
 * @throws Error saying what was expected and where, when the text is not WKT.
 * @example readWkt('POINT (1.5 2)') // { type: 'Point', coordinates: [1.5, 2] }
 */
export function readWkt(text: string): Geometry {
  const cursor = { text: text.replace(/^\s*SRID=\d+;/i, ''), at: 0 };
  const geometry = readGeometry(cursor, 0);
  skipSpace(cursor);
  if (cursor.at < cursor.text.length) fail(cursor, 'the end of the text');
  return geometry;
}

type Cursor = { text: string; at: number };

const TYPES = {
  POINT: 'Point',
  LINESTRING: 'LineString',
  POLYGON: 'Polygon',
  MULTIPOINT: 'MultiPoint',
  MULTILINESTRING: 'MultiLineString',
  MULTIPOLYGON: 'MultiPolygon',
  GEOMETRYCOLLECTION: 'GeometryCollection',
} as const;

function readGeometry(cursor: Cursor, depth: number): Geometry {
  if (depth > 32) fail(cursor, 'collections nested at most 32 deep');
  const word = readWord(cursor);
  const type = TYPES[word as keyof typeof TYPES];
  if (type === undefined) fail(cursor, 'a geometry type', word);
  const tag = peekWord(cursor);
  if (tag === 'Z' || tag === 'M' || tag === 'ZM') readWord(cursor);
  const empty = peekWord(cursor) === 'EMPTY';
  if (empty) readWord(cursor);
  switch (type) {
    case 'Point':
      return { type, coordinates: empty ? [] : enclosed(cursor, readPosition) };
    case 'LineString':
      return { type, coordinates: empty ? [] : list(cursor, readPosition) };
    case 'Polygon':
    case 'MultiLineString':
      return { type, coordinates: empty ? [] : list(cursor, readSequence) };
    case 'MultiPoint':
      return { type, coordinates: empty ? [] : list(cursor, readMultiPointMember) };
    case 'MultiPolygon':
      return { type, coordinates: empty ? [] : list(cursor, (inner) => list(inner, readSequence)) };
    case 'GeometryCollection':
      return { type, geometries: empty ? [] : list(cursor, (inner) => readGeometry(inner, depth + 1)) };
  }
}

/** `( item, item, … )` */
function list<T>(cursor: Cursor, readItem: (cursor: Cursor) => T): T[] {
  expect(cursor, '(');
  const items = [readItem(cursor)];
  while (skipSpace(cursor) === ',') {
    cursor.at++;
    items.push(readItem(cursor));
  }
  expect(cursor, ')');
  return items;
}

function readSequence(cursor: Cursor): Position[] {
  return list(cursor, readPosition);
}

function readMultiPointMember(cursor: Cursor): Position {
  return skipSpace(cursor) === '(' ? enclosed(cursor, readPosition) : readPosition(cursor);
}

/** `( item )`: one item, where a second would be lost. */
function enclosed<T>(cursor: Cursor, readItem: (cursor: Cursor) => T): T {
  expect(cursor, '(');
  const item = readItem(cursor);
  expect(cursor, ')');
  return item;
}

const NUMBER = /[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|NaN/y;

function readPosition(cursor: Cursor): Position {
  const position: number[] = [];
  for (;;) {
    skipSpace(cursor);
    NUMBER.lastIndex = cursor.at;
    const match = NUMBER.exec(cursor.text);
    if (!match) break;
    position.push(Number(match[0]));
    cursor.at = NUMBER.lastIndex;
  }
  if (position.length < 2) fail(cursor, 'a position of two numbers or more');
  if (position.length > 4) fail(cursor, 'a position of four numbers at most (x y z m)');
  return position.slice(0, 2);
}

function readWord(cursor: Cursor): string {
  skipSpace(cursor);
  const start = cursor.at;
  while (cursor.at < cursor.text.length && /[A-Za-z]/.test(cursor.text[cursor.at]!)) cursor.at++;
  return cursor.text.slice(start, cursor.at).toUpperCase();
}

function peekWord(cursor: Cursor): string {
  const at = cursor.at;
  const word = readWord(cursor);
  cursor.at = at;
  return word;
}

function expect(cursor: Cursor, character: string): void {
  if (skipSpace(cursor) !== character) fail(cursor, `"${character}"`);
  cursor.at++;
}

/** Skips white space; the next character, or '' at the end. */
function skipSpace(cursor: Cursor): string {
  while (cursor.at < cursor.text.length && /\s/.test(cursor.text[cursor.at]!)) cursor.at++;
  return cursor.text[cursor.at] ?? '';
}

function fail(cursor: Cursor, expected: string, found?: string): never {
  const shown = found ?? (cursor.text.slice(cursor.at, cursor.at + 12) || 'the end');
  throw new Error(`expected ${expected} at character ${cursor.at + 1}, found ${JSON.stringify(shown)}`);
}
