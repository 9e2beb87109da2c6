import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DuckDBTypeId, type DuckDBConnection, type DuckDBDataChunk, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { RecordBatch, Table, tableToIPC } from 'apache-arrow';
import proj4 from 'proj4';
import type { DownloadFormat } from '../core/api/catalog/routes.ts';
import { isLonLat } from '../core/geo/crs.ts';
import type { Geometry } from '../core/geo/wkb.ts';
import { createExtent, finishExtent, inspectWkb, WKB_TYPE_NAMES } from '../core/geo/wkb-inspect.ts';
import { geometryToWkt } from '../core/geo/wkt.ts';
import { createArrowBatchBuilder, crsOfType, parseJsonObject } from './arrow.ts';
import { queryFailure } from './errors.ts';
import type { QueryTask } from './protocol.ts';
import { shapeOf, subquery, type ResultShape } from './run-task.ts';
import { createValueConverter, type JsonValue } from './values.ts';

/**
 * Whole results as files (the `export` task kind): GeoParquet 1.1, GeoJSON (RFC 7946) or CSV (RFC 4180), at
 * most the download row limit. The worker streams the result from its sandbox chunk by chunk and writes the
 * file itself, into a private folder the API process made for this one task; DuckDB never writes (its sandbox
 * keeps external access off), so a query can write nothing anywhere. CSV and GeoJSON hold one chunk in memory
 * at a time; GeoParquet holds the whole result as Arrow, then parquet-wasm writes it with its `geo` metadata.
 */

/** What an export task returns. */
export interface ExportValue {
  rows: number;
  bytes: number;
  warnings: string[];
}

/** A task writing a whole result to `path`. */
export type ExportTask = Extract<QueryTask, { kind: 'export' }>;

/** Turns chunks of rows into the bytes or text of one file format. */
interface ResultWriter {
  start: () => string;
  write: (chunk: DuckDBDataChunk) => string;
  end: () => Promise<string | Uint8Array>;
  warnings: () => Iterable<string>;
}

/**
 * GeoParquet files declare their CRS as PROJJSON, which proj4 cannot write: a download in another CRS than
 * longitude/latitude cannot say what it is, so it is refused before anything runs.
 */
export function checkDownload(format: DownloadFormat, resultCrs: string | undefined): void {
  if (format === 'parquet' && resultCrs !== undefined && !isLonLat(resultCrs)) throw queryFailure('download_crs_not_supported', resultCrs);
}

/** Runs an export task in its sandbox: at most `maxRows` rows, or the whole task fails with `download_too_many_rows`. */
export async function runExport(connection: DuckDBConnection, task: ExportTask, isInterrupted: () => boolean): Promise<ExportValue> {
  const result = await connection.stream(`SELECT * FROM ${subquery(task.sql)} LIMIT ${task.maxRows + 1}`);
  const names = result.columnNames();
  const types = result.columnTypes();
  const writer = createWriter(task, names, types, shapeOf(names, types.map(String), task.geometryColumn));
  const file = await open(task.path, 'wx', 0o600);
  try {
    let rows = 0;
    await put(file, writer.start());
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      if (isInterrupted()) break;
      rows += chunk.rowCount;
      if (rows > task.maxRows) throw queryFailure('download_too_many_rows', task.maxRows);
      await put(file, writer.write(chunk));
    }
    // An interrupt ends a stream as if the result had ended (DESIGN.md, "Query sandbox").
    if (isInterrupted()) throw queryFailure('query_timeout');
    await put(file, await writer.end());
    return { rows, bytes: (await file.stat()).size, warnings: [...writer.warnings()] };
  } finally {
    await file.close();
  }
}

/** Writes text or bytes to a file (FileHandle.write takes each through its own overload). */
function put(file: FileHandle, data: string | Uint8Array): Promise<unknown> {
  return typeof data === 'string' ? file.write(data) : file.write(data);
}

function createWriter(task: ExportTask, names: string[], types: DuckDBType[], shape: ResultShape): ResultWriter {
  const geometries = new Set(names.flatMap((name, index) => (name === shape.geometry || types[index]!.typeId === DuckDBTypeId.GEOMETRY ? [index] : [])));
  if (task.format === 'parquet') return parquetWriter(names, types, shape, geometries);
  // GeoJSON is WGS84 longitude/latitude by definition (RFC 7946 §4), whatever result_crs asks.
  const project = task.format === 'csv' && task.resultCrs !== undefined ? proj4('EPSG:4326', task.resultCrs).forward : undefined;
  const converter = createValueConverter({ plainLists: true, ...(project ? { project: (position) => project(position) as [number, number] } : {}) });
  const convert = (values: DuckDBValue[], index: number) => converter.convert(values[index] ?? null, geometries.has(index));
  const writer = task.format === 'csv' ? csvWriter(names, geometries, convert) : geoJsonWriter(names, names.indexOf(shape.geometry ?? ''), convert);
  return { ...writer, warnings: () => converter.warnings };
}

/** CSV (RFC 4180): a header of column names, CRLF line ends, geometries as WKT, nested values as JSON. */
function csvWriter(names: string[], geometries: Set<number>, convert: (values: DuckDBValue[], index: number) => JsonValue): Omit<ResultWriter, 'warnings'> {
  const text = (value: JsonValue, isGeometry: boolean) => {
    if (value === null) return '';
    if (isGeometry && typeof value === 'object') return geometryToWkt(value as unknown as Geometry);
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  };
  const line = (fields: string[]) => `${fields.map(quoteCsv).join(',')}\r\n`;
  return {
    start: () => line(names),
    write: (chunk) => chunk.getRows().map((values) => line(names.map((_, index) => text(convert(values, index), geometries.has(index))))).join(''),
    end: async () => '',
  };
}

/** A CSV field, quoted when it holds a comma, a quote or a line break (quotes doubled inside). */
function quoteCsv(field: string): string {
  return /[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}

/** A GeoJSON FeatureCollection, one feature per row: the geometry column as geometry, the others as properties. */
function geoJsonWriter(names: string[], geometry: number, convert: (values: DuckDBValue[], index: number) => JsonValue): Omit<ResultWriter, 'warnings'> {
  let first = true;
  const feature = (values: DuckDBValue[]) => {
    // Column names come from the query: no prototype, so a column named __proto__ stays a property.
    const properties: Record<string, JsonValue> = Object.create(null);
    names.forEach((name, index) => index !== geometry && (properties[name] = convert(values, index)));
    return JSON.stringify({ type: 'Feature', geometry: geometry >= 0 ? convert(values, geometry) : null, properties });
  };
  return {
    start: () => '{"type":"FeatureCollection","features":[',
    write: (chunk) => {
      const text = chunk.getRows().map(feature).join(',\n');
      const joined = first ? `\n${text}` : `,\n${text}`;
      first = false;
      return joined;
    },
    end: async () => '\n]}\n',
  };
}

/**
 * GeoParquet 1.1: the result as Arrow (geometries as WKB), written by parquet-wasm with zstd and the `geo`
 * metadata: every geometry column with its types and bbox, the CRS when the data's type carries PROJJSON
 * (else none, which means OGC:CRS84), and the bbox covering when the result keeps one beside its geometry.
 * DuckDB 1.5's own GeoParquet writer would say version 1.0.0. A result without geometry is plain Parquet.
 */
function parquetWriter(names: string[], types: DuckDBType[], shape: ResultShape, geometries: Set<number>): ResultWriter {
  const builder = createArrowBatchBuilder(names, types, { geometry: shape.geometry, resultCrs: undefined });
  const batches: RecordBatch[] = [];
  const columns = [...geometries].map((index) => ({ index, types: new Set<string>(), extent: createExtent() }));
  return {
    start: () => '',
    write: (chunk) => {
      const values = chunk.getColumns();
      builder.appendColumns(values);
      for (const column of columns) {
        for (const value of values[column.index]!) {
          const bytes = (value as { bytes?: Uint8Array } | null)?.bytes;
          if (bytes) recordGeometry(column, bytes);
        }
      }
      batches.push(builder.flush());
      return '';
    },
    end: async () => {
      const { Compression, Table: WasmTable, WriterPropertiesBuilder, writeParquet } = await import('parquet-wasm');
      const table = batches.length > 0 ? new Table(batches) : new Table(builder.schema);
      let properties = new WriterPropertiesBuilder().setCompression(Compression.ZSTD);
      if (shape.geometry !== null) {
        const geo = {
          version: '1.1.0',
          primary_column: shape.geometry,
          columns: Object.fromEntries(columns.map((column) => [names[column.index]!, describeColumn(column, types[column.index]!, shape, names[column.index]!)])),
        };
        properties = properties.setKeyValueMetadata(new Map([['geo', JSON.stringify(geo)]]));
      }
      return writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), properties.build());
    },
    warnings: () => builder.warnings,
  };
}

interface GeometryColumnStats {
  types: Set<string>;
  extent: ReturnType<typeof createExtent>;
}

/** Counts a geometry's type (with " Z" when it has one, as GeoParquet names them) and grows the column's extent. */
function recordGeometry(column: GeometryColumnStats, bytes: Uint8Array): void {
  const inspection = inspectWkb(bytes, column.extent);
  if (inspection.type === 0 || bytes.byteLength < 5) return;
  const code = new DataView(bytes.buffer, bytes.byteOffset, 5).getUint32(1, bytes[0] === 1);
  // ISO codes 1001–1007 and 3001–3007 and the EWKB flag 0x80000000 carry Z.
  const hasZ = (code & 0x80000000) !== 0 || [1, 3].includes(Math.floor((code & 0xffff) / 1000));
  column.types.add(`${WKB_TYPE_NAMES[inspection.type]}${hasZ ? ' Z' : ''}`);
}

/** The `geo` metadata of one column. */
function describeColumn(column: GeometryColumnStats, type: DuckDBType, shape: ResultShape, name: string): Record<string, unknown> {
  const bbox = finishExtent(column.extent);
  const crs = crsOfType(type);
  const projjson = crs === undefined ? undefined : parseJsonObject(crs);
  const covering = name === shape.geometry && shape.hasBbox
    ? { covering: { bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] } } }
    : {};
  return { encoding: 'WKB', geometry_types: [...column.types].sort(), ...(bbox ? { bbox } : {}), ...(projjson ? { crs: projjson } : {}), ...covering };
}

/** A written download, open for reading; its file is already removed, so nothing is left behind whatever happens. */
export interface ResultFile {
  rows: number;
  bytes: number;
  warnings: string[];
  /** The file's bytes; reading them to the end, or cancelling, closes the file. */
  body: ReadableStream<Uint8Array>;
  /** Closes the file unread (for HEAD). */
  discard: () => Promise<void>;
}

/**
 * Runs `write` with the path of a new file in a private folder (mode 0700, made for this call), then opens the
 * file and removes the folder before anything is sent: the open file is all that is left, and the system frees
 * it when it is closed. A failed or timed-out write leaves nothing either.
 */
export async function withResultFile(format: DownloadFormat, write: (path: string) => Promise<ExportValue>): Promise<ResultFile> {
  const folder = await mkdtemp(join(tmpdir(), 'geoshelf-download-'));
  try {
    const path = join(folder, `result.${format}`);
    const value = await write(path);
    const file = await open(path, 'r');
    const stream = file.createReadStream();
    return {
      ...value,
      body: Readable.toWeb(stream) as ReadableStream<Uint8Array>,
      discard: async () => {
        stream.destroy();
        await file.close().catch(() => undefined);
      },
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
