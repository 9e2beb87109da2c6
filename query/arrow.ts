import { DuckDBGeometryType, DuckDBTypeId, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { Field, makeData, RecordBatch, RecordBatchReader, Schema, Struct, Table, tableToIPC } from 'apache-arrow';
import proj4 from 'proj4';
import { decodeWkb, encodeWkb } from '../core/geo/wkb.ts';
import type { QueryResult } from '../schemas/query.ts';
import { createColumn, createWkbColumn } from './arrow-columns.ts';
import { queryFailure } from './errors.ts';
import { shapePage, type PageContext } from './page.ts';
import { readPageRows } from './page-rows.ts';
import type { ArrowPageValue, QueryTask } from './protocol.ts';
import type { StepName } from './steps.ts';
import { createValueConverter, projectGeometry } from './values.ts';

/**
 * Query pages as Arrow IPC streams (`Accept: application/vnd.apache.arrow.stream`), built in the worker from
 * DuckDB's own values, so types survive (query/arrow-columns.ts) and geometries stay WKB: GeoArrow's
 * `geoarrow.wkb` extension type, with the CRS in its metadata. The page's facts (offset, has_more, warnings, …)
 * go into the schema's metadata under {@link ARROW_PAGE_METADATA_KEY}; surfaces send them as headers too.
 */

/** Schema metadata key of a page's facts: the QueryResult fields but rows, columns, map_configuration and the token. */
export const ARROW_PAGE_METADATA_KEY = 'geoshelf:page';

/** An Arrow page as a surface answers it: the stream, and its facts for headers. */
export interface ArrowPage {
  /** The QueryResult of the page without rows, columns and map_configuration, which the stream replaces. */
  facts: Omit<QueryResult, 'rows' | 'columns' | 'map_configuration'>;
  ipc: Uint8Array;
}

/**
 * PROJJSON of OGC:CRS84, the CRS of geometries that neither the query (result_crs) nor the data names another
 * for: longitude/latitude on WGS84, as GeoParquet and GeoJSON read them by default.
 */
export const CRS84_PROJJSON = {
  $schema: 'https://proj.org/schemas/v0.7/projjson.schema.json',
  type: 'GeographicCRS',
  name: 'WGS 84 (CRS84)',
  datum: { type: 'GeodeticReferenceFrame', name: 'World Geodetic System 1984', ellipsoid: { name: 'WGS 84', semi_major_axis: 6378137, inverse_flattening: 298.257223563 } },
  coordinate_system: {
    subtype: 'ellipsoidal',
    axis: [
      { name: 'Geodetic longitude', abbreviation: 'Lon', direction: 'east', unit: 'degree' },
      { name: 'Geodetic latitude', abbreviation: 'Lat', direction: 'north', unit: 'degree' },
    ],
  },
  id: { authority: 'OGC', code: 'CRS84' },
};

/** Options of {@link createArrowBatchBuilder}. */
export interface ArrowBatchOptions {
  /** The result's geometry column: GEOMETRY, or a WKB BLOB named by geometry_column. Every GEOMETRY column is WKB too. */
  geometry: string | null;
  /** Reprojects geometries from WGS84 to this CRS (`AUTHORITY:CODE`); absent keeps DuckDB's WKB as it is. */
  resultCrs: string | undefined;
}

/** Rows of one result into Arrow record batches, for a page or a download. */
export interface ArrowBatchBuilder {
  schema: Schema;
  /** Appends a row (DuckDB values in column order) and returns about how many bytes it adds to an IPC stream. */
  append: (values: DuckDBValue[]) => number;
  /** Appends rows given column by column, as a DuckDB chunk's `getColumns()` gives them: faster than row by row. */
  appendColumns: (values: DuckDBValue[][]) => void;
  /** The rows appended since the last flush, as one record batch. */
  flush: () => RecordBatch;
  /** What the reader should know (text columns, geometries that could not be reprojected), each once. */
  warnings: Set<string>;
}

/**
 * Creates the builder of a result's record batches. Geometry columns are `geoarrow.wkb` fields: the WKB
 * DuckDB gives (`DuckDBGeometryValue.bytes`, what `st_asbinary` returns), reprojected when `resultCrs` asks.
 */
export function createArrowBatchBuilder(names: string[], types: DuckDBType[], options: ArrowBatchOptions): ArrowBatchBuilder {
  const warnings = new Set<string>();
  const textTypes = new Set<string>();
  const converter = createValueConverter({ plainLists: true });
  const project = options.resultCrs ? proj4('EPSG:4326', options.resultCrs).forward : undefined;
  const toWkb = (value: DuckDBValue): Uint8Array | null => {
    const bytes = (value as { bytes: Uint8Array }).bytes;
    if (!project) return bytes;
    try {
      return encodeWkb(projectGeometry(decodeWkb(bytes), (position) => project(position) as [number, number]));
    } catch {
      warnings.add('Some geometries could not be decoded and are returned as null.');
      return null;
    }
  };
  const toText = (value: DuckDBValue) => {
    const converted = converter.convert(value, false);
    return typeof converted === 'string' ? converted : JSON.stringify(converted);
  };
  const isGeometry = (index: number) => types[index]!.typeId === DuckDBTypeId.GEOMETRY || names[index] === options.geometry;
  const columns = types.map((type, index) => (isGeometry(index) ? createWkbColumn(toWkb) : createColumn(type, { toText, onText: (text) => textTypes.add(String(text)) })));
  const fields = columns.map((column, index) => new Field(names[index]!, column.type, true, isGeometry(index) ? geoArrowMetadata(types[index]!, options.resultCrs) : null));
  if (textTypes.size > 0) warnings.add(`Columns of type ${[...textTypes].join(', ')} are written as text (JSON for MAP and UNION): Arrow has no such type.`);
  const schema = new Schema(fields);
  const validityBytes = Math.ceil(columns.length / 8);
  let length = 0;
  return {
    schema,
    warnings,
    append(values) {
      length++;
      return columns.reduce((bytes, column, index) => bytes + column.push(values[index] ?? null), validityBytes);
    },
    appendColumns(values) {
      columns.forEach((column, index) => {
        for (const value of values[index] ?? []) column.push(value);
      });
      length += values[0]?.length ?? 0;
    },
    flush() {
      const batch = new RecordBatch(schema, makeData({ type: new Struct(fields), length, children: columns.map((column) => column.take()) }));
      length = 0;
      return batch;
    },
  };
}

/** The CRS DuckDB's GEOMETRY type of a column carries, if any (the file's, or one set with st_setcrs). */
export function crsOfType(type: DuckDBType): string | undefined {
  return type instanceof DuckDBGeometryType && type.crs ? type.crs : undefined;
}

/**
 * GeoArrow field metadata of a WKB column (extension-types.md): the requested result_crs as an authority code,
 * else the column type's CRS (PROJJSON when it is a JSON object), else OGC:CRS84 as PROJJSON.
 */
function geoArrowMetadata(type: DuckDBType, resultCrs: string | undefined): Map<string, string> {
  const crs = resultCrs ?? crsOfType(type);
  let described: { crs: unknown; crs_type?: string } = { crs: CRS84_PROJJSON, crs_type: 'projjson' };
  if (crs !== undefined) {
    const projjson = parseJsonObject(crs);
    if (projjson) described = { crs: projjson, crs_type: 'projjson' };
    else described = /^[A-Za-z]+:\w+$/.test(crs) ? { crs, crs_type: 'authority_code' } : { crs };
  }
  return new Map([['ARROW:extension:name', 'geoarrow.wkb'], ['ARROW:extension:metadata', JSON.stringify(described)]]);
}

/** The object a text holds as JSON, or undefined when it holds no JSON object. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes of a stream beside its rows: schema, message headers, padding, and the facts added in the API process. */
function streamOverhead(columns: number): number {
  return 4096 + 256 * columns;
}

/**
 * One page of the result as an Arrow stream: rows `offset` to `offset + limit`, cut earlier when the stream would
 * pass the response cap, as a JSON page is. One extra row is read to know whether more follow.
 */
export async function runArrowPage(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'page' }>, isInterrupted: () => boolean, lap?: (step: StepName) => void): Promise<ArrowPageValue> {
  const { names, types, shape, raw, bytesRead } = await readPageRows(connection, task, isInterrupted, lap);
  const builder = createArrowBatchBuilder(names, types, { geometry: shape.geometry, resultCrs: task.resultCrs });
  const budget = task.settings.maxResponseBytes - streamOverhead(names.length);
  const wanted = Math.min(raw.length, task.limit);
  let size = 0;
  let count = 0;
  while (count < wanted) {
    size += builder.append(raw[count]!);
    if (size > budget) break;
    count++;
  }
  const truncated = count < wanted;
  // No page can hold a row larger than the cap; answering an empty page would send clients round in circles.
  if (truncated && count === 0) throw queryFailure('row_too_large', task.settings.maxResponseBytes);
  const warnings = [...builder.warnings];
  if (truncated) warnings.push(`The page was cut at ${count} rows to stay under ${task.settings.maxResponseBytes} bytes; ask for the next page at next_offset.`);
  return {
    ipc: tableToIPC(new Table([builder.flush().slice(0, count)]), 'stream'),
    rowCount: count,
    hasMore: truncated || raw.length > task.limit,
    truncated,
    warnings,
    bytesRead,
    geometryColumn: shape.geometry,
  };
}

/** The rows of an Arrow page's facts, which the stream carries instead. */
const EMPTY_ROWS = new TextEncoder().encode('[]');

/**
 * Shapes a worker's Arrow page as a surface answers it: the facts a JSON page holds (shapePage makes both, so
 * they cannot differ), written into the stream's schema metadata as JSON under ARROW_PAGE_METADATA_KEY, with
 * the token left out so that a saved stream does not carry a credential.
 */
export function shapeArrowPage(value: ArrowPageValue, context: PageContext): ArrowPage {
  const { rows: _rows, columns: _columns, map_configuration: _map, ...facts } = shapePage({ ...value, columns: [], rowsJson: EMPTY_ROWS }, context);
  const { query_token: _token, ...described } = facts;
  return { facts, ipc: withSchemaMetadata(value.ipc, new Map([[ARROW_PAGE_METADATA_KEY, JSON.stringify(described)]])) };
}

/**
 * The stream with metadata added to its schema. A stream is its schema message, then record batches, then an
 * end marker; each message starts with 0xFFFFFFFF and the length of its header, and a schema has no body. So
 * the schema message is written anew and the batches are kept as they are, not encoded again.
 */
function withSchemaMetadata(stream: Uint8Array, metadata: Map<string, string>): Uint8Array {
  const messageEnd = (bytes: Uint8Array) => 8 + new DataView(bytes.buffer, bytes.byteOffset, 8).getInt32(4, true);
  const original = RecordBatchReader.from(stream).open().schema;
  const head = tableToIPC(new Table(new Schema(original.fields, new Map([...original.metadata, ...metadata]))), 'stream');
  const headEnd = messageEnd(head);
  const rest = stream.subarray(messageEnd(stream));
  const joined = new Uint8Array(headEnd + rest.byteLength);
  joined.set(head.subarray(0, headEnd));
  joined.set(rest, headEnd);
  return joined;
}
