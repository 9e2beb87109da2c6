/**
 * The first step of `geoshelf convert`: what kind of file the input is, how DuckDB reads it as rows, and which of
 * its columns hold the geometry. Nothing is read into JavaScript here but column names and types.
 */
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral } from '../../core/sql.ts';
import { ConvertError } from './convert-error.ts';

/** The input formats `geoshelf convert` reads, by file extension. */
export const INPUT_FORMATS: Record<string, 'geojson' | 'csv' | 'parquet'> = {
  '.geojson': 'geojson',
  '.json': 'geojson',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.txt': 'csv',
  '.parquet': 'parquet',
  '.geoparquet': 'parquet',
};

/** Where a row's geometry comes from: two coordinate columns, or one column of WKT, WKB, GEOMETRY or GeoJSON. */
export type GeometrySource =
  | { kind: 'lonlat'; lon: string; lat: string }
  | { kind: 'wkt' | 'wkb' | 'geometry' | 'geojson'; column: string };

/** How to read an input: a DuckDB relation, its columns, and where the geometry is. */
export interface SourcePlan {
  /** A SQL query yielding one row per feature. */
  query: string;
  /** Every column of `query`, in order, with its DuckDB type. */
  columns: { name: string; type: string }[];
  geometry: GeometrySource;
  /** The columns written as they are: all but the geometry source's (longitude/latitude columns are kept). */
  attributes: string[];
}

/** Names of the geometry column, as the input's options give them. */
export interface GeometryOptions {
  lon?: string;
  lat?: string;
  wkt?: string;
  geometry?: string;
}

const LON_NAMES = ['lon', 'lng', 'long', 'longitude', 'x'];
const LAT_NAMES = ['lat', 'latitude', 'y'];
const GEOMETRY_NAMES = ['geometry', 'geom', 'wkt', 'wkb', 'the_geom'];
/** Names the output gives its own columns. */
const OUTPUT_COLUMNS = ['geometry', 'bbox'];

/** Plans how to read `path` (`label` names it in errors). @throws ConvertError when it cannot be converted. */
export async function planSource(connection: DuckDBConnection, path: string, label: string, options: GeometryOptions): Promise<SourcePlan> {
  const format = INPUT_FORMATS[extname(path).toLowerCase()];
  if (format === undefined) {
    throw new ConvertError(label, `geoshelf convert reads ${[...Object.keys(INPUT_FORMATS), '.shp', '.gpkg', '.gdb'].join(', ')} files, not ${extname(path) || 'a file without an extension'}`);
  }
  if (format === 'geojson') return planGeoJson(connection, path, label);
  if (format === 'parquet') await refuseGeoParquet(connection, path, label);
  // The sniffer guesses "no quoting" when its sample holds no quoted field, and a later "a, b" then breaks a row.
  const reader = format === 'csv' ? `read_csv(${quoteLiteral(path)}, quote = '"', escape = '"')` : `read_parquet(${quoteLiteral(path)})`;
  const query = `SELECT * FROM ${reader}`;
  const columns = await describeQuery(connection, query, label);
  const geometry = findGeometry(columns, options, label);
  const replaced = geometry.kind === 'lonlat' ? [] : [geometry.column];
  return { query, columns, geometry, attributes: checkAttributes(columns.map((column) => column.name).filter((name) => !replaced.includes(name)), label) };
}

async function planGeoJson(connection: DuckDBConnection, path: string, label: string): Promise<SourcePlan> {
  await assertJsonObject(path, label);
  const features = `SELECT unnest(features) AS f FROM read_json(${quoteLiteral(path)}, maximum_object_size = 1073741824)`;
  let featureType: string;
  try {
    featureType = (await describeQuery(connection, features, label)).find((column) => column.name === 'f')?.type ?? '';
  } catch {
    throw new ConvertError(label, 'it is not a GeoJSON FeatureCollection (no "features" array of Feature objects)');
  }
  if (!/^STRUCT\(.*\bgeometry\b/i.test(featureType)) throw new ConvertError(label, 'it is not a GeoJSON FeatureCollection (its features have no "geometry")');
  // Features without properties make DuckDB type `properties` as JSON or NULL, which cannot be unnested.
  const hasProperties = /\bproperties STRUCT\(/i.test(featureType);
  const query = `SELECT ${hasProperties ? 'unnest(f.properties), ' : ''}f.geometry::JSON AS geometry FROM (${features})`;
  const columns = await describeQuery(connection, query, label);
  const attributes = checkAttributes(columns.slice(0, -1).map((column) => column.name), label);
  return { query, columns, geometry: { kind: 'geojson', column: 'geometry' }, attributes };
}

/** A quick look before DuckDB's JSON reader, whose own error on a CSV or a binary file says little. */
async function assertJsonObject(path: string, label: string): Promise<void> {
  const file = await open(path);
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(4096), 0, 4096, 0);
    const start = buffer.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '').trimStart();
    if (!start.startsWith('{')) throw new ConvertError(label, 'it is not GeoJSON: it does not start with a JSON object');
  } finally {
    await file.close();
  }
}

async function refuseGeoParquet(connection: DuckDBConnection, path: string, label: string): Promise<void> {
  let keys: string[];
  try {
    keys = (await connection.runAndReadAll(`SELECT decode(key) AS key FROM parquet_kv_metadata(${quoteLiteral(path)})`)).getRows().map((row) => String(row[0]));
  } catch (error) {
    throw new ConvertError(label, `it is not a Parquet file DuckDB can read (${firstLine(error)})`);
  }
  if (keys.includes('geo')) throw new ConvertError(label, 'it is GeoParquet already (it has "geo" metadata); there is nothing to convert');
}

async function describeQuery(connection: DuckDBConnection, query: string, label: string): Promise<{ name: string; type: string }[]> {
  try {
    const rows = (await connection.runAndReadAll(`DESCRIBE ${query}`)).getRowObjects();
    return rows.map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
  } catch (error) {
    throw new ConvertError(label, `DuckDB cannot read it: ${firstLine(error)}`);
  }
}

/** The geometry of a table: options first, then a geometry column by name, then longitude/latitude columns. */
function findGeometry(columns: { name: string; type: string }[], options: GeometryOptions, label: string): GeometrySource {
  const byName = (name: string, option: string) => {
    const column = columns.find((each) => each.name === name) ?? columns.find((each) => each.name.toLowerCase() === name.toLowerCase());
    if (!column) throw new ConvertError(label, `it has no column ${JSON.stringify(name)} (${option}); its columns are: ${listNames(columns)}`);
    return column;
  };
  if (options.lon !== undefined || options.lat !== undefined) {
    const lon = options.lon === undefined ? findByNames(columns, LON_NAMES) : byName(options.lon, '--lon');
    const lat = options.lat === undefined ? findByNames(columns, LAT_NAMES) : byName(options.lat, '--lat');
    if (!lon || !lat) throw new ConvertError(label, `name both coordinate columns with --lon and --lat; its columns are: ${listNames(columns)}`);
    return { kind: 'lonlat', lon: lon.name, lat: lat.name };
  }
  if (options.wkt !== undefined) return { kind: 'wkt', column: byName(options.wkt, '--wkt').name };
  const named = options.geometry !== undefined ? byName(options.geometry, '--geometry') : findByNames(columns, GEOMETRY_NAMES);
  if (named) {
    const kind = geometryKind(named.type);
    if (kind) return { kind, column: named.name };
    if (options.geometry !== undefined) throw new ConvertError(label, `its column ${JSON.stringify(named.name)} is ${named.type}, not WKB (BLOB), WKT (VARCHAR) or GEOMETRY`);
  }
  const lon = findByNames(columns, LON_NAMES);
  const lat = findByNames(columns, LAT_NAMES);
  if (lon && lat) return { kind: 'lonlat', lon: lon.name, lat: lat.name };
  throw new ConvertError(
    label,
    `it has no longitude/latitude or geometry column; its columns are: ${listNames(columns)} (name them with --lon and --lat, --wkt or --geometry)`,
  );
}

function geometryKind(type: string): 'wkt' | 'wkb' | 'geometry' | undefined {
  const upper = type.toUpperCase();
  if (upper === 'BLOB') return 'wkb';
  if (upper === 'VARCHAR') return 'wkt';
  if (upper.startsWith('GEOMETRY')) return 'geometry';
  return undefined;
}

function findByNames(columns: { name: string; type: string }[], names: string[]): { name: string; type: string } | undefined {
  for (const name of names) {
    const column = columns.find((each) => each.name.toLowerCase() === name);
    if (column) return column;
  }
  return undefined;
}

function checkAttributes(names: string[], label: string): string[] {
  const clash = names.find((name) => OUTPUT_COLUMNS.includes(name.toLowerCase()));
  if (clash !== undefined) throw new ConvertError(label, `its column ${JSON.stringify(clash)} has a name the output gives its own geometry or bbox column; rename it first`);
  return names;
}

function listNames(columns: { name: string }[]): string {
  return columns.map((column) => column.name).join(', ');
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
