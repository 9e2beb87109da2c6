/**
 * The WKT that `geoshelf convert` must read, and the text it must refuse with a reason, as one table that every
 * WKT reader of `wkt-hilbert-bench.ts` is put through: tests/wkt-read.test.ts's cases, and the spellings found in
 * CSV exports (GDAL's old 2.5D WKT without a Z, PostGIS's EWKT, pretty-printed text).
 */
import type { Geometry } from '../core/geo/wkb.ts';

/** A WKT reader under test: text to a GeoJSON geometry; null is how some libraries refuse. */
export interface WktReader {
  name: string;
  read: (text: string) => unknown;
}

const point = (x: number, y: number): Geometry => ({ type: 'Point', coordinates: [x, y] });

/** [what, text, the 2D geometry expected, or null when the text must be refused]. */
const CASES: [string, string, Geometry | null][] = [
  ['a point', 'POINT (2.3522 48.8566)', point(2.3522, 48.8566)],
  ['no space before "("', 'POINT(1 2)', point(1, 2)],
  ['a line', 'LINESTRING (0 0, 1.5 -2e-7)', { type: 'LineString', coordinates: [[0, 0], [1.5, -2e-7]] }],
  ['a polygon with a hole', 'POLYGON ((0 0, 4 0, 4 4, 0 0), (1 1, 2 1, 2 2, 1 1))', { type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 4], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 1]]] }],
  ['MULTIPOINT ((x y), …)', 'MULTIPOINT ((1 2), (3 4))', { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] }],
  ['MULTIPOINT (x y, …)', 'MULTIPOINT (1 2, 3 4)', { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] }],
  ['a multipolygon', 'MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))', { type: 'MultiPolygon', coordinates: [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[5, 5], [6, 5], [6, 6], [5, 5]]]] }],
  ['a collection with an empty member', 'GEOMETRYCOLLECTION (POINT (1 2), LINESTRING EMPTY)', { type: 'GeometryCollection', geometries: [point(1, 2), { type: 'LineString', coordinates: [] }] }],
  ['nested collections', 'GEOMETRYCOLLECTION (GEOMETRYCOLLECTION (POINT (1 2)), POINT (3 4))', { type: 'GeometryCollection', geometries: [{ type: 'GeometryCollection', geometries: [point(1, 2)] }, point(3, 4)] }],
  ['POINT EMPTY', 'POINT EMPTY', { type: 'Point', coordinates: [] }],
  ['POLYGON EMPTY', 'POLYGON EMPTY', { type: 'Polygon', coordinates: [] }],
  ['GEOMETRYCOLLECTION EMPTY', 'GEOMETRYCOLLECTION EMPTY', { type: 'GeometryCollection', geometries: [] }],
  ['Z', 'POINT Z (1 2 3)', point(1, 2)],
  ['M', 'POINT M (1 2 3)', point(1, 2)],
  ['ZM', 'LINESTRING ZM (0 0 1 2, 1 1 3 4)', { type: 'LineString', coordinates: [[0, 0], [1, 1]] }],
  ['Z EMPTY', 'POINT Z EMPTY', { type: 'Point', coordinates: [] }],
  ['three ordinates without Z (GDAL\'s old 2.5D)', 'POINT (1 2 3)', point(1, 2)],
  ['lower case', 'point z (1 2 3)', point(1, 2)],
  ['EWKT', 'SRID=4326;POINT(1 2)', point(1, 2)],
  ['a leading space', ' POINT (1 2)', point(1, 2)],
  ['line breaks', 'POLYGON ((0 0,\n 1 0,\n 1 1,\n 0 0))', { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] }],
  ['signs and exponents', 'POINT (+1e3 -.5)', point(1000, -0.5)],
  ['one ordinate', 'POINT (1)', null],
  ['five ordinates', 'POINT (1 2 3 4 5)', null],
  ['two positions in a point', 'POINT (1 2, 3 4)', null],
  ['no ")"', 'POINT (1 2', null],
  ['an unknown type', 'CIRCLE (1 2)', null],
  ['trailing text', 'POINT (1 2) trailing', null],
  ['two geometries', 'POINT (1 2), POINT (3 4)', null],
  ['letters for numbers', 'POINT (a b)', null],
  ['a dangling comma', 'LINESTRING (0 0, )', null],
  ['empty text', '', null],
  ['GeoJSON', '{"type":"Point","coordinates":[1,2]}', null],
];

/** The texts whose refusal messages are shown side by side. */
const SHOWN = ['no ")"', 'letters for numbers'];

/** Bench rows: per reader, how many cases it gets right and what it does with the others; then some messages. */
export function checkWktReaders(readers: WktReader[]): { name: string; value: string; note: string }[] {
  const rows = readers.map((reader) => {
    const wrong = CASES.flatMap(([what, text, expected]) => {
      const outcome = tryRead(reader, text);
      if (expected === null) return 'error' in outcome ? [] : [`${what}: ${outcome.geometry === null ? 'null, no reason' : 'accepted'}`];
      if ('error' in outcome) return [`${what}: throws "${outcome.error}"`];
      return JSON.stringify(flatten(outcome.geometry)) === JSON.stringify(expected) ? [] : [`${what}: ${JSON.stringify(outcome.geometry)}`];
    });
    return {
      name: `WKT cases read or refused as convert needs: ${reader.name}`,
      value: `${CASES.length - wrong.length} of ${CASES.length}`,
      note: wrong.length ? wrong.join('; ').replaceAll('|', '/') : 'all',
    };
  });
  for (const what of SHOWN) {
    const text = CASES.find(([label]) => label === what)![1];
    const messages = readers.map((reader) => {
      const outcome = tryRead(reader, text);
      return `${reader.name}: ${'error' in outcome ? `"${outcome.error}"` : JSON.stringify(outcome.geometry)}`;
    });
    rows.push({ name: `what each says of ${JSON.stringify(text)}`, value: messages.join('; ').replaceAll('|', '/'), note: 'convert reports "row N: … is not WKT (this)"' });
  }
  return rows;
}

function tryRead(reader: WktReader, text: string): { geometry: unknown } | { error: string } {
  try {
    return { geometry: reader.read(text) };
  } catch (error) {
    return { error: (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 140) };
  }
}

/** The 2D geometry, without the members some libraries add (terraformer's `properties`, wellknown's `crs`). */
function flatten(geometry: unknown): unknown {
  if (geometry === null || typeof geometry !== 'object') return geometry;
  const { type, coordinates, geometries } = geometry as { type: string; coordinates?: unknown; geometries?: unknown[] };
  if (geometries) return { type, geometries: geometries.map(flatten) };
  return { type, coordinates: to2d(coordinates) };
}

function to2d(coordinates: unknown): unknown {
  if (!Array.isArray(coordinates)) return coordinates;
  if (typeof coordinates[0] === 'number') return coordinates.slice(0, 2);
  return coordinates.map(to2d);
}
