/**
 * The first step of `geoshelf convert`: what kind of file the input is, how DuckDB reads it as rows, and which of
 * its columns hold the geometry. Nothing is read into JavaScript here but column names and types, and GeoJSON's
 * bytes on their way to a file of one feature per line (geojson-lines.ts), which DuckDB reads a buffer at a time.
 */
import { extname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral } from '../../core/sql.ts';
import { ConvertError } from './convert-error.ts';
import { findMalformedLine, writeFeatureLines } from './geojson-lines.ts';

/**
 * The input formats `geoshelf convert` reads, by file extension: a GeoJSON FeatureCollection, GeoJSON features one
 * after another (RFC 8142 Text Sequences, or newline-delimited), CSV, Parquet.
 */
export const INPUT_FORMATS: Record<string, 'geojson' | 'geojsonseq' | 'csv' | 'parquet'> = {
  '.geojson': 'geojson',
  '.json': 'geojson',
  '.geojsonl': 'geojsonseq',
  '.geojsons': 'geojsonseq',
  '.geojsonseq': 'geojsonseq',
  '.ndjson': 'geojsonseq',
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

/** The file of one feature per line that `prepareInput` writes, and `planSource` reads, in the scratch folder. */
const FEATURE_LINES = 'features.ndjson';
/** DuckDB's own maximum_object_size: its JSON reader holds buffers of twice this, whatever the features' size. */
const DEFAULT_OBJECT_BYTES = 16 << 20;

/** DuckDB's maximum_object_size for lines up to `longestLine` bytes long. */
function objectBytes(longestLine: number): number {
  return Math.max(DEFAULT_OBJECT_BYTES, longestLine + 1);
}

/** A file ready for `planSource`: the input itself (CSV, Parquet), or its GeoJSON features one a line. */
export interface PreparedInput {
  path: string;
  format: 'lines' | 'csv' | 'parquet';
  /** For lines: the longest in bytes, which DuckDB's JSON reader must be told it may meet. */
  longestLine: number;
}

/**
 * Makes the file `planSource` reads for `input`, in the conversion's `scratch` folder: GeoJSON (a FeatureCollection
 * or a sequence) is first written there as one feature per line, since DuckDB reads a FeatureCollection whole; CSV
 * and Parquet are read as they are. `label` names the input in errors.
 * @throws ConvertError for an extension geoshelf does not read, or GeoJSON that is not a FeatureCollection or a
 * sequence of features.
 */
export async function prepareInput(input: string, scratch: string, label: string): Promise<PreparedInput> {
  const format = INPUT_FORMATS[extname(input).toLowerCase()];
  if (format === undefined) {
    throw new ConvertError(label, `geoshelf convert reads ${[...Object.keys(INPUT_FORMATS), '.shp', '.gpkg', '.gdb'].join(', ')} files, not ${extname(input) || 'a file without an extension'}`);
  }
  if (format === 'csv' || format === 'parquet') return { path: input, format, longestLine: 0 };
  const path = join(scratch, FEATURE_LINES);
  const { longestLine } = await writeFeatureLines(input, path, format === 'geojson' ? 'collection' : 'sequence', label);
  return { path, format: 'lines', longestLine };
}

/** Plans how to read what `prepareInput` made (`label` names the input in errors). @throws ConvertError when it cannot be converted. */
export async function planSource(connection: DuckDBConnection, input: PreparedInput, label: string, options: GeometryOptions): Promise<SourcePlan> {
  const { path, format } = input;
  if (format === 'lines') return planFeatureLines(connection, input, label);
  if (format === 'parquet') await refuseGeoParquet(connection, path, label);
  // The sniffer guesses "no quoting" when its sample holds no quoted field, and a later "a, b" then breaks a row.
  const reader = format === 'csv' ? `read_csv(${quoteLiteral(path)}, quote = '"', escape = '"')` : `read_parquet(${quoteLiteral(path)})`;
  const query = `SELECT * FROM ${reader}`;
  const columns = await describeQuery(connection, query, label);
  const geometry = findGeometry(columns, options, label);
  const replaced = geometry.kind === 'lonlat' ? [] : [geometry.column];
  return { query, columns, geometry, attributes: checkAttributes(columns.map((column) => column.name).filter((name) => !replaced.includes(name)), label) };
}

/**
 * Reads a file of one GeoJSON feature per line: a column per property, and the geometry as JSON text. DuckDB
 * infers the types in a first pass (DESCRIBE), and the read that copies the rows is told them.
 * - `sample_size = -1`: the types come from every feature, not the first 20,480; with a sample, a property that
 *   first appears later is dropped without a word, and one that turns from numbers to text stops the read with a
 *   cast error. A property of several types becomes JSON.
 * - `map_inference_threshold = -1`: properties stay a STRUCT, so a column each; DuckDB would otherwise make many or
 *   sparse keys one MAP, which `unnest` cannot spread into columns.
 * - the geometry is read as JSON text, not as the nested lists DuckDB infers: reading a 100 MB line took 2.6 GB
 *   as lists, 0.7 GB as text.
 * - `maximum_object_size`: the longest line, when over DuckDB's 16 MB (a detailed coastline). Not more: DuckDB
 *   allocates buffers of twice this, 2 GB for a 1 GB allowance.
 */
async function planFeatureLines(connection: DuckDBConnection, input: PreparedInput, label: string): Promise<SourcePlan> {
  const lines = `${quoteLiteral(input.path)}, format = 'newline_delimited', records = true, maximum_object_size = ${objectBytes(input.longestLine)}`;
  let inferred: { name: string; type: string }[];
  try {
    inferred = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_json(${lines}, sample_size = -1, map_inference_threshold = -1)`))
      .getRowObjects().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
  } catch (error) {
    // DuckDB names the scratch file, and its line numbers are off by one: say which feature, from JSON.parse.
    const malformed = await findMalformedLine(input.path);
    if (malformed) throw new ConvertError(label, `its feature ${malformed.line} is not valid JSON (${malformed.reason})`);
    throw new ConvertError(label, `DuckDB cannot read it: ${firstLine(error)}`);
  }
  if (!inferred.some((column) => column.name === 'geometry')) throw new ConvertError(label, 'it is not GeoJSON: its features have no "geometry"');
  const types = inferred.map(({ name, type }) => `${quoteLiteral(name)}: ${quoteLiteral(name === 'geometry' ? 'JSON' : type)}`);
  // Features without properties make DuckDB type `properties` as JSON or NULL, which cannot be unnested.
  const hasProperties = inferred.some((column) => column.name === 'properties' && /^STRUCT\(/i.test(column.type));
  const query = `SELECT ${hasProperties ? 'unnest(properties), ' : ''}geometry FROM read_json(${lines}, columns = {${types.join(', ')}})`;
  const columns = await describeQuery(connection, query, label);
  const attributes = checkAttributes(columns.slice(0, -1).map((column) => column.name), label);
  return { query, columns, geometry: { kind: 'geojson', column: 'geometry' }, attributes };
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
