import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import proj4 from 'proj4';
import { isLonLat } from '../core/geo/crs.ts';
import { quoteIdentifier, quoteLiteral } from '../core/sql.ts';
import type { EqualityFilter, FeatureFilter } from '../core/api/ogc/items.ts';
import { queryFailure } from './errors.ts';
import type { FeaturesValue, QueryTask } from './protocol.ts';
import { nameSpatialFunction, registerSpatialTests } from './cql2-spatial.ts';
import { compileCql2, type Cql2SqlContext } from './cql2-sql.ts';
import { envelopeTest, isBboxCovering, readColumns, toFileBox, type ColumnMemo } from './result-shape.ts';
import { createValueConverter, type JsonValue } from './values.ts';

/**
 * OGC API - Features reads (the `features` task kind): pages of rows of one GeoParquet file as GeoJSON features
 * in CRS84. The SQL is written here from a structured request; nothing a user sent becomes SQL but numbers
 * and quoted literals. Feature ids are DuckDB's `file_row_number` (0-based position of the row in the file).
 *
 * Paging is keyset on that row number, never OFFSET: measured on the 1M-row synthetic file (DuckDB 1.5.6),
 * `WHERE file_row_number > 900000 LIMIT 101` scans 3,167 rows (EXPLAIN ANALYZE) in 8.6 ms, against 11.3 ms
 * for the first 101 rows and 12.9 ms for `OFFSET 900000`: the filter on the virtual column prunes whole row
 * groups, so a deep page reads what a first page does. With `preserve_insertion_order` and no ORDER BY,
 * `LIMIT` stops the scan early and rows come in file order.
 */

/** A task reading features of one file; its SQL is made in the worker from `read`, after a DESCRIBE of the file. */
export type FeaturesTask = Extract<QueryTask, { kind: 'features' }>;

interface FileShape {
  geometry: string | null;
  hasBbox: boolean;
  properties: string[];
}

/**
 * The columns of the file, from its prepared statement, and remembered by the sandbox, whose file does not change
 * while it is kept (query/worker.ts): a DESCRIBE ran a query on every page.
 */
async function describeFile(connection: DuckDBConnection, from: string, wanted: string | undefined, memo?: ColumnMemo): Promise<FileShape> {
  const select = `SELECT * FROM ${from}`;
  const { names, types } = await readColumns(connection, select, select, memo);
  const geometry = wanted !== undefined && names.includes(wanted) ? wanted : (names.find((_, index) => types[index] === 'GEOMETRY') ?? null);
  const hasBbox = names.some((name, index) => name === 'bbox' && isBboxCovering(types[index]!));
  const properties = names.filter((name) => name !== geometry && name !== 'file_row_number' && !(name === 'bbox' && hasBbox));
  return { geometry, hasBbox, properties };
}

/** Runs a features task in its sandbox: the file is the task's one source. */
export async function runFeatures(connection: DuckDBConnection, task: FeaturesTask, isInterrupted: () => boolean, memo?: ColumnMemo): Promise<FeaturesValue> {
  const from = `read_parquet(${quoteLiteral(task.sources[0]!.path)}, file_row_number = true)`;
  const read = task.read;
  const shape = await describeFile(connection, from, task.geometryColumn, memo);
  const select = `SELECT file_row_number, ${shape.geometry ? quoteIdentifier(shape.geometry) : 'NULL'}${shape.properties.map((name) => `, ${quoteIdentifier(name)}`).join('')} FROM ${from}`;
  const crs = task.crs ?? 'OGC:CRS84';
  if (read.mode === 'one') {
    const reader = await connection.runAndReadAll(`${select} WHERE file_row_number = ${Math.trunc(read.id)} LIMIT 1`);
    const one = toFeatures(reader.getRows(), shape, crs, Infinity);
    return { featuresJson: Buffer.from(`[${one.texts.join(',')}]`), ids: one.ids, hasMore: false };
  }
  const params: DuckDBValue[] = [];
  const spatial: Cql2SqlContext['spatial'] = { name: nameSpatialFunction(), literals: [] };
  const where = filterSql(read.filter, shape, crs, params, spatial);
  const bound = params.length > 0 ? params : undefined;
  const release = spatial.literals.length > 0 ? await registerSpatialTests(connection, spatial) : undefined;
  try {
    return await readPage(connection, { task, read, shape, crs, select, from, where, bound }, isInterrupted);
  } finally {
    release?.();
  }
}

interface PageQuery {
  task: FeaturesTask;
  read: Extract<FeaturesTask['read'], { mode: 'page' }>;
  shape: FileShape;
  crs: string;
  select: string;
  from: string;
  where: string[];
  bound: DuckDBValue[] | undefined;
}

/** Reads a page of features, and counts them when asked. */
async function readPage(connection: DuckDBConnection, { task, read, shape, crs, select, from, where, bound }: PageQuery, isInterrupted: () => boolean): Promise<FeaturesValue> {
  const cursor = read.before !== undefined ? `file_row_number < ${Math.trunc(read.before)}` : read.after !== undefined ? `file_row_number > ${Math.trunc(read.after)}` : null;
  const conditions = [...where, ...(cursor ? [cursor] : [])];
  const clause = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
  // A prev page is the `limit` rows nearest before the cursor: the only read here that needs an ORDER BY.
  const order = read.before !== undefined ? ' ORDER BY file_row_number DESC' : '';
  const reader = await connection.streamAndReadUntil(`${select}${clause}${order} LIMIT ${read.limit + 1}`, read.limit + 1, bound);
  if (isInterrupted()) throw queryFailure('query_timeout');
  const rows = reader.getRows().slice(0, read.limit + 1);
  const { texts, ids } = toFeatures(rows.slice(0, read.limit), shape, crs, task.settings.maxResponseBytes);
  if (read.before !== undefined) {
    texts.reverse();
    ids.reverse();
  }
  const value: FeaturesValue = { featuresJson: Buffer.from(`[${texts.join(',')}]`), ids, hasMore: rows.length > read.limit || ids.length < Math.min(rows.length, read.limit) };
  if (read.count) {
    const counted = await connection.runAndReadAll(`SELECT count(*) FROM ${from}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`, bound);
    value.matched = Number(counted.getRows()[0]?.[0] ?? 0);
  }
  if (isInterrupted()) throw queryFailure('query_timeout');
  return value;
}

/**
 * The SQL conditions of a filter, every one of them to hold; the values of a CQL2 filter's literals go on `params`,
 * and its geometry literals on `spatial`, for the function its spatial tests call.
 */
function filterSql(filter: FeatureFilter, shape: FileShape, crs: string, params: DuckDBValue[], spatial: Cql2SqlContext['spatial']): string[] {
  const conditions: string[] = [];
  if (filter.boxes.length > 0) {
    if (!shape.geometry) return ['FALSE'];
    const geometry = quoteIdentifier(shape.geometry);
    const boxes = filter.boxes.map((box) => toFileBox(box, crs));
    conditions.push(`(${boxes.map((box) => `(${envelopeTest(geometry, shape.hasBbox, box)})`).join(' OR ')})`);
  }
  if (filter.time) conditions.push(...timeSql(filter.time));
  for (const { column, type, value } of filter.equals) conditions.push(`${quoteIdentifier(column)} = ${literalOf(type, value)}`);
  if (filter.cql) {
    const context = { properties: new Map(filter.cql.properties), geometry: shape.geometry, hasBbox: shape.hasBbox, crs, spatial };
    conditions.push(compileCql2(filter.cql.expression, context, params));
  }
  return conditions;
}

function timeSql(time: NonNullable<FeatureFilter['time']>): string[] {
  const column = quoteIdentifier(time.column);
  // Dates match when their day meets the interval; timestamps without zone are taken as UTC.
  const literal = (instant: string) => (time.type === 'date' ? `DATE '${instant.slice(0, 10)}'` : `TIMESTAMP '${instant.slice(0, 23).replace('T', ' ')}'`);
  const value = time.type === 'date' ? column : `CAST(${column} AS TIMESTAMP)`;
  const conditions = [`${column} IS NOT NULL`];
  if (time.start !== null) conditions.push(`${value} >= ${literal(time.start)}`);
  if (time.end !== null) conditions.push(`${value} <= ${literal(time.end)}`);
  return conditions;
}

/** A value as an SQL literal of its type; the API process has checked its spelling, this only guards the SQL. */
function literalOf(type: EqualityFilter['type'], value: string): string {
  if (type === 'integer' && /^-?\d{1,19}$/.test(value)) return value;
  if (type === 'number' && Number.isFinite(Number(value))) return `${Number(value)}::DOUBLE`;
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value;
  if (type === 'string') return quoteLiteral(value);
  return 'NULL';
}

/**
 * Rows (row number, geometry, properties) as GeoJSON features in CRS84, each as JSON text, stopping before their
 * JSON passes `maxBytes` (at least one feature is kept, so paging always moves on).
 */
function toFeatures(rows: DuckDBValue[][], shape: FileShape, crs: string, maxBytes: number): { texts: string[]; ids: number[] } {
  const project = isLonLat(crs) ? undefined : proj4(crs, 'EPSG:4326').forward;
  const converter = createValueConverter(project ? { project: (position) => project(position) as [number, number] } : {});
  const texts: string[] = [];
  const ids: number[] = [];
  let size = 0;
  for (const values of rows) {
    // Column names come from the file: no prototype, so a column named __proto__ stays a property.
    const properties: Record<string, JsonValue> = Object.create(null);
    shape.properties.forEach((name, index) => (properties[name] = converter.convert(values[index + 2] ?? null, false)));
    const id = Number(values[0]);
    const text = JSON.stringify({ type: 'Feature', id, geometry: converter.convert(values[1] ?? null, true), properties });
    size += text.length + 1;
    if (texts.length > 0 && size > maxBytes) break;
    texts.push(text);
    ids.push(id);
  }
  return { texts, ids };
}
