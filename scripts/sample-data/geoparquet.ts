/**
 * Writes a FeatureTable as GeoParquet 1.1 with DuckDB: a WKB `geometry`
 * column (Parquet's native GEOMETRY logical type) and a `bbox` covering column,
 * in the shape of core/geo/geoparquet.ts.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { createGeoMetadata, createGeoParquetCopyOptions } from '../../core/geo/geoparquet.ts';
import type { GeoMetadata } from '../../core/geo/geoparquet.ts';
import { encodeWkb } from '../../core/geo/wkb.ts';
import { bboxOfRow, bboxOfTable, listGeometryTypes } from './table.ts';
import type { CellValue, ColumnSpec, FeatureTable } from './table.ts';

/** Opens an in-memory DuckDB with one thread, so row groups and bytes are deterministic. */
export async function openDuckDb(): Promise<DuckDBConnection> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1', preserve_insertion_order: 'true' });
  return instance.connect();
}

/** The `geo` metadata of a table: types, overall bbox and the bbox covering. CRS is omitted (OGC:CRS84). */
export function buildGeoMetadata(table: FeatureTable): GeoMetadata {
  const bbox = bboxOfTable(table);
  if (bbox === null) throw new Error('cannot write GeoParquet metadata for an empty table');
  return createGeoMetadata(listGeometryTypes(table), bbox);
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
  await connection.run(
    `COPY (SELECT ${select} FROM __staging ORDER BY rowid) TO ${quoteLiteral(path)} (${createGeoParquetCopyOptions(buildGeoMetadata(table))})`,
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
