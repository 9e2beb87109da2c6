/**
 * The per-row step of `geoshelf convert`: a row's geometry input (coordinates, WKT, WKB, GeoJSON) becomes WKB and
 * a bounding box in JavaScript, since DuckDB here has no spatial extension.
 */
import type { DuckDBBlobValue, DuckDBValue } from '@duckdb/node-api';
import { quoteIdentifier } from '../../core/sql.ts';
import { bboxOfGeometry, decodeWkb, encodeWkb, type BBox, type Geometry, type GeometryType } from '../../core/geo/wkb.ts';
import { readWkt } from '../../core/geo/wkt-read.ts';
import { transformGeometry, type PositionTransform } from '../../core/geo/crs.ts';
import type { GeometrySource } from './read-source.ts';

/** One row's geometry, ready to stage: its WKB, type, and bbox (null for an empty geometry). */
export interface Shape {
  wkb: Uint8Array;
  type: GeometryType;
  bbox: BBox | null;
}

/** A row's geometry input could not be read; `message` says why, without the row number. */
export class RowError extends Error {}

/** The SQL expressions that select a source's geometry input, in the order `encodeShape` takes them. */
export function selectGeometryInput(source: GeometrySource): string[] {
  switch (source.kind) {
    case 'lonlat':
      return [source.lon, source.lat].flatMap((name) => [`TRY_CAST(${quoteIdentifier(name)} AS DOUBLE)`, `${quoteIdentifier(name)}::VARCHAR`]);
    case 'geometry':
      return [`st_asbinary(${quoteIdentifier(source.column)})`];
    case 'geojson':
    case 'wkt':
      return [`${quoteIdentifier(source.column)}::VARCHAR`];
    case 'wkb':
      return [quoteIdentifier(source.column)];
  }
}

/**
 * The shape of one row from the values `selectGeometryInput` selected; null when the row has no geometry.
 * `transform` (the input's CRS to longitude/latitude) is applied before the WKB and bbox are made.
 * @throws RowError when the input is not a geometry.
 */
export function encodeShape(kind: GeometrySource['kind'], values: DuckDBValue[], transform: PositionTransform | null = null): Shape | null {
  const geometry = readGeometry(kind, values);
  if (geometry === null) return null;
  if (transform) transformGeometry(geometry, transform);
  return fromGeometry(geometry);
}

function readGeometry(kind: GeometrySource['kind'], values: DuckDBValue[]): Geometry | null {
  switch (kind) {
    case 'lonlat':
      return readPoint(values);
    case 'wkb':
    case 'geometry':
      return values[0] === null ? null : readWkb((values[0] as DuckDBBlobValue).bytes);
    case 'wkt':
      return values[0] === null || String(values[0]).trim() === '' ? null : parseText(String(values[0]), readWkt, 'WKT');
    case 'geojson':
      return values[0] === null || values[0] === 'null' ? null : parseText(String(values[0]), readGeoJson, 'a GeoJSON geometry');
  }
}

function readPoint(values: DuckDBValue[]): Geometry | null {
  const [x, xText, y, yText] = values;
  if (xText === null || yText === null) return null;
  if (x === null) throw new RowError(`${JSON.stringify(xText)} is not a longitude`);
  if (y === null) throw new RowError(`${JSON.stringify(yText)} is not a latitude`);
  return { type: 'Point', coordinates: [x as number, y as number] };
}

function readWkb(bytes: Uint8Array): Geometry {
  try {
    return decodeWkb(bytes);
  } catch (error) {
    throw new RowError(`its WKB cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
}

function parseText(text: string, parse: (text: string) => Geometry, what: string): Geometry {
  try {
    return parse(text);
  } catch (error) {
    const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    throw new RowError(`${JSON.stringify(shown)} is not ${what} (${error instanceof Error ? error.message : String(error)})`);
  }
}

const GEOMETRY_TYPES = new Set(['Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection']);

function readGeoJson(text: string): Geometry {
  const geometry = JSON.parse(text) as Geometry;
  if (!geometry || !GEOMETRY_TYPES.has(geometry.type)) throw new Error(`its type is ${JSON.stringify((geometry as { type?: unknown } | null)?.type)}`);
  if (geometry.type === 'GeometryCollection' ? !Array.isArray(geometry.geometries) : !Array.isArray(geometry.coordinates)) throw new Error('it has no coordinates');
  return geometry;
}

/** Re-encoding makes every geometry 2D little-endian ISO WKB, whatever flavour (EWKB, big-endian, Z) it came in. */
function fromGeometry(geometry: Geometry): Shape {
  return { wkb: encodeWkb(geometry), type: geometry.type, bbox: bboxOfGeometry(geometry) };
}
