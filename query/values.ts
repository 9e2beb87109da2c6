import {
  DuckDBArrayValue, DuckDBBlobValue, DuckDBDecimalValue, DuckDBGeometryValue, DuckDBListValue, DuckDBMapValue,
  DuckDBStructValue, DuckDBUnionValue, type DuckDBValue,
} from '@duckdb/node-api';
import { decodeWkb, type Geometry } from '../core/geo/wkb.ts';

/** A value of a result row as JSON. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Converts values of one result, collecting the warnings its values deserve (each once). */
export interface ValueConverter {
  convert: (value: DuckDBValue, asGeometry: boolean) => JsonValue;
  warnings: Set<string>;
}

/** Options of value conversion. */
export interface ConvertOptions {
  /** Reprojects a geometry's coordinates from WGS84 to the requested CRS; absent for WGS84 output. */
  project?: (position: [number, number]) => [number, number];
  /** Lists of scalars as plain arrays: for downloads, where the contract's rule on rows does not apply. */
  plainLists?: boolean;
}

/**
 * Creates the converter of result values to the JSON the contract allows: BIGINT as a number when it is safe
 * and as a string otherwise; DECIMAL as a number; dates and timestamps as ISO strings; BLOB as base64;
 * GEOMETRY (and a WKB column named as the geometry column) as a GeoJSON geometry object; STRUCT and MAP as
 * objects; a LIST of structs as an array of objects, and a LIST of anything else as an array of
 * `{ "value": … }` objects (the contract allows arrays of objects only); NaN and ±Infinity as null.
 */
export function createValueConverter(options: ConvertOptions = {}): ValueConverter {
  const warnings = new Set<string>();
  const convert = (value: DuckDBValue, asGeometry: boolean): JsonValue => {
    if (value === null || value === undefined) return null;
    switch (typeof value) {
      case 'boolean':
      case 'string':
        return value;
      case 'number':
        if (Number.isFinite(value)) return value;
        warnings.add('NaN and infinite numbers are returned as null.');
        return null;
      case 'bigint':
        if (value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)) return Number(value);
        warnings.add('Integers beyond ±2^53 are returned as strings, to keep every digit.');
        return value.toString();
    }
    if (value instanceof DuckDBDecimalValue) return value.toDouble();
    if (value instanceof DuckDBGeometryValue || (asGeometry && value instanceof DuckDBBlobValue)) return toGeoJson(value.bytes, options, warnings);
    if (value instanceof DuckDBBlobValue) return Buffer.from(value.bytes).toString('base64');
    if (value instanceof DuckDBStructValue) {
      const object: { [key: string]: JsonValue } = {};
      for (const [key, entry] of Object.entries(value.entries)) object[key] = convert(entry, false);
      return object;
    }
    if (value instanceof DuckDBMapValue) {
      const object: { [key: string]: JsonValue } = {};
      for (const { key, value: entry } of value.entries) object[String(convert(key, false))] = convert(entry, false);
      return object;
    }
    if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) {
      return value.items.map((item) => {
        const converted = convert(item, false);
        if (options.plainLists || (converted !== null && typeof converted === 'object' && !Array.isArray(converted))) return converted;
        warnings.add('List values that are not structs are returned as objects {"value": …}, as the contract allows arrays of objects only.');
        return { value: converted };
      });
    }
    if (value instanceof DuckDBUnionValue) return convert(value.value, asGeometry);
    return toIsoText(String(value));
  };
  return { convert, warnings };
}

/** Dates, times and timestamps print as `2024-01-02 03:04:05+00`; ISO 8601 wants a `T` and `+00:00`. */
function toIsoText(text: string): string {
  const match = /^(-?\d{4,}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)([+-]\d{2})?(?::?(\d{2}))?$/.exec(text);
  if (!match) return text;
  const [, date, time, hours, minutes] = match;
  return `${date}T${time}${hours ? `${hours}:${minutes ?? '00'}` : ''}`;
}

function toGeoJson(bytes: Uint8Array, options: ConvertOptions, warnings: Set<string>): JsonValue {
  let geometry: Geometry;
  try {
    geometry = decodeWkb(bytes);
  } catch {
    warnings.add('Some geometries could not be decoded and are returned as null.');
    return null;
  }
  return (options.project ? projectGeometry(geometry, options.project) : geometry) as unknown as JsonValue;
}

/** Applies `project` to every position of a geometry, returning a new geometry. */
export function projectGeometry(geometry: Geometry, project: (position: [number, number]) => [number, number]): Geometry {
  const point = (position: number[]) => project([position[0] ?? Number.NaN, position[1] ?? Number.NaN]);
  switch (geometry.type) {
    case 'Point':
      return geometry.coordinates.length === 0 ? geometry : { type: 'Point', coordinates: point(geometry.coordinates) };
    case 'LineString':
    case 'MultiPoint':
      return { type: geometry.type, coordinates: geometry.coordinates.map(point) };
    case 'Polygon':
    case 'MultiLineString':
      return { type: geometry.type, coordinates: geometry.coordinates.map((line) => line.map(point)) };
    case 'MultiPolygon':
      return { type: 'MultiPolygon', coordinates: geometry.coordinates.map((polygon) => polygon.map((ring) => ring.map(point))) };
    case 'GeometryCollection':
      return { type: 'GeometryCollection', geometries: geometry.geometries.map((part) => projectGeometry(part, project)) };
  }
}
