/**
 * Writes a FeatureTable as GeoParquet 1.1 with DuckDB: a WKB `geometry`
 * column (Parquet's native GEOMETRY logical type) and a `bbox` covering column.
 *
 * DuckDB 1.5.6's GEOPARQUET_VERSION 'BOTH' writes "version": "1.0.0" metadata
 * without a covering, and adding KV_METADATA {geo: …} to it writes a second
 * `geo` key. So the metadata is built here and written with GEOPARQUET_VERSION
 * 'NONE' (same column encoding as 'BOTH', no metadata of its own) + KV_METADATA.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { encodeWkb } from '../../core/geo/wkb.ts';
import type { BBox, GeometryType } from '../../core/geo/wkb.ts';
import { bboxOfRow, bboxOfTable, listGeometryTypes } from './table.ts';
import type { CellValue, ColumnSpec, FeatureTable } from './table.ts';

/** Parquet writer settings: zstd, row groups small enough to prune by the bbox statistics. */
export const PARQUET_SETTINGS = { compression: 'zstd', compressionLevel: 9, rowGroupSize: 16_384 } as const;

/** The GeoParquet 1.1 `geo` file metadata written for each file. */
export type GeoMetadata = {
  version: '1.1.0';
  primary_column: 'geometry';
  columns: {
    geometry: {
      encoding: 'WKB';
      geometry_types: GeometryType[];
      bbox: BBox;
      covering: { bbox: Record<'xmin' | 'ymin' | 'xmax' | 'ymax', ['bbox', string]> };
    };
  };
};

/** Opens an in-memory DuckDB with one thread, so row groups and bytes are deterministic. */
export async function openDuckDb(): Promise<DuckDBConnection> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1', preserve_insertion_order: 'true' });
  return instance.connect();
}

/** The `geo` metadata of a table: types, overall bbox and the bbox covering. CRS is omitted (OGC:CRS84). */
export function buildGeoMetadata(table: FeatureTable): GeoMetadata {
  const bbox = bboxOfTable(table);
  if (bbox === null) throw new Error('cannot write GeoParquet metadata for an empty table');
  const covering: GeoMetadata['columns']['geometry']['covering'] = {
    bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] },
  };
  return {
    version: '1.1.0',
    primary_column: 'geometry',
    columns: { geometry: { encoding: 'WKB', geometry_types: listGeometryTypes(table), bbox, covering } },
  };
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

function appendCell(appender: DuckDBAppender, column: ColumnSpec, value: CellValue): void {
  if (value === null) return appender.appendNull();
  if (column.type === 'VARCHAR') return appender.appendVarchar(String(value));
  if (typeof value !== 'number') throw new Error(`${column.name}: ${JSON.stringify(value)} is not a number`);
  if (column.type === 'INTEGER') return appender.appendInteger(value);
  if (column.type === 'BIGINT') return appender.appendBigInt(BigInt(value));
  return appender.appendDouble(value);
}

async function stageRows(connection: DuckDBConnection, table: FeatureTable): Promise<void> {
  const columns = table.columns.map((column) => `${quoteIdentifier(column.name)} ${column.type}`);
  const bounds = ['xmin', 'ymin', 'xmax', 'ymax'].map((name) => `__${name} DOUBLE`);
  await connection.run(`CREATE OR REPLACE TABLE __staging (${[...columns, ...bounds, '__wkb BLOB'].join(', ')})`);
  const appender = await connection.createAppender('__staging');
  for (const row of table.rows) {
    table.columns.forEach((column, index) => appendCell(appender, column, row.values[index] ?? null));
    for (const value of bboxOfRow(row)) appender.appendDouble(value);
    appender.appendBlob(encodeWkb(row.geometry));
    appender.endRow();
  }
  appender.closeSync();
}

/** Writes `table` to `path` as GeoParquet 1.1, rows in table order. */
export async function writeGeoParquet(connection: DuckDBConnection, table: FeatureTable, path: string): Promise<void> {
  await stageRows(connection, table);
  const attributes = table.columns.map((column) => quoteIdentifier(column.name));
  const select = [
    ...attributes,
    'st_geomfromwkb(__wkb) AS geometry',
    `{'xmin': __xmin, 'ymin': __ymin, 'xmax': __xmax, 'ymax': __ymax} AS bbox`,
  ].join(', ');
  const { compression, compressionLevel, rowGroupSize } = PARQUET_SETTINGS;
  const geo = quoteLiteral(JSON.stringify(buildGeoMetadata(table)));
  await connection.run(
    `COPY (SELECT ${select} FROM __staging ORDER BY rowid) TO ${quoteLiteral(path)} (FORMAT parquet, ` +
      `COMPRESSION ${compression}, COMPRESSION_LEVEL ${compressionLevel}, ROW_GROUP_SIZE ${rowGroupSize}, ` +
      `GEOPARQUET_VERSION 'NONE', KV_METADATA {geo: ${geo}})`,
  );
  await connection.run('DROP TABLE __staging');
}

/** What a written file reads back as: rows, rows whose geometry decodes, and its `geo` metadata. */
export type GeoParquetSummary = { rows: number; decoded: number; geo: GeoMetadata | null };

/** Reads a GeoParquet file back through DuckDB to check it. */
export async function readGeoParquetSummary(connection: DuckDBConnection, path: string): Promise<GeoParquetSummary> {
  const file = quoteLiteral(path);
  const counts = await connection.runAndReadAll(
    `SELECT count(*)::INTEGER AS n, count(st_astext(geometry))::INTEGER AS decoded FROM read_parquet(${file})`,
  );
  const [n, decoded] = counts.getRows()[0] ?? [];
  const kv = await connection.runAndReadAll(
    `SELECT decode(value) FROM parquet_kv_metadata(${file}) WHERE decode(key) = 'geo'`,
  );
  const values = kv.getRows().map((row) => String(row[0]));
  if (values.length > 1) throw new Error(`${path} has ${values.length} geo metadata keys`);
  return { rows: Number(n), decoded: Number(decoded), geo: values[0] === undefined ? null : (JSON.parse(values[0]) as GeoMetadata) };
}
