import type { DuckDBConnection } from '@duckdb/node-api';
import { isLonLat, reprojectBounds } from '../core/geo/crs.ts';
import { encodeWkb } from '../core/geo/wkb.ts';
import { quoteIdentifier } from '../core/sql.ts';
import { queryFailure } from './errors.ts';
import { stripTrailingSemicolons } from './sql-source.ts';

/**
 * A result as the worker's readers see it (pages, bounds, tiles, downloads, features): the user's SQL as a
 * subquery, its columns and geometry column, and the SQL that tests its rows against an envelope.
 */

/** The user's SQL as a subquery: newlines keep a trailing `--` comment from swallowing the parenthesis. */
export function subquery(sql: string): string {
  // A final `;` ends the statement; inside parentheses it would break it.
  return `(\n${stripTrailingSemicolons(sql)}\n) AS __geoshelf_result`;
}

/** The columns of a result, and its geometry column. */
export interface ResultShape {
  names: string[];
  types: string[];
  geometry: string | null;
  /** A GeoParquet covering column beside the geometry, usable to filter and frame without decoding. */
  hasBbox: boolean;
}

/**
 * The shape of a result from its prepared statement, which binds the SQL without running it. A DESCRIBE ran a
 * query, and in a fresh instance the query after it then ran slower too (measured on 1M points: bounds took
 * 2.5–6 ms longer after a DESCRIBE than after preparing).
 */
export async function describeResult(connection: DuckDBConnection, sql: string, wanted: string | undefined, memo?: ColumnMemo): Promise<ResultShape> {
  const columns = await readColumns(connection, sql, `SELECT * FROM ${subquery(sql)}`, memo);
  return shapeOf(columns.names, columns.types, wanted);
}

/** The result columns of `select`, bound by preparing it (not run), and remembered under `key`. */
export async function readColumns(connection: DuckDBConnection, key: string, select: string, memo?: ColumnMemo): Promise<{ names: string[]; types: string[] }> {
  let columns = memo?.get(key);
  if (!columns) {
    const prepared = await connection.prepare(select);
    try {
      const indexes = Array.from({ length: prepared.columnCount }, (_, index) => index);
      columns = { names: indexes.map((index) => prepared.columnName(index)), types: indexes.map((index) => String(prepared.columnType(index))) };
    } finally {
      prepared.destroySync();
    }
    memo?.set(key, columns);
    if (memo && memo.size > COLUMN_MEMO_SIZE) memo.delete(memo.keys().next().value!);
  }
  return columns;
}

/**
 * The columns of the results of recent SQL texts in one sandbox, whose views never change (query/sandbox.ts):
 * binding a query to learn them took 2.3 ms of each bounds and each tile on the 1M-point file, against 52 ms for
 * the bounds' own aggregate.
 */
export type ColumnMemo = Map<string, { names: string[]; types: string[] }>;
/** SQL texts a sandbox remembers the columns of (first in, first out). */
const COLUMN_MEMO_SIZE = 64;

/** Finds the geometry column of a result (the wanted one, or the first GEOMETRY) and whether a bbox covering sits beside it. */
export function shapeOf(names: string[], types: string[], wanted: string | undefined): ResultShape {
  let geometry: string | null = null;
  if (wanted !== undefined) {
    const index = names.indexOf(wanted);
    if (index < 0) throw queryFailure('geometry_column_not_found', wanted);
    if (types[index] !== 'GEOMETRY' && types[index] !== 'BLOB') throw queryFailure('geometry_column_not_geometry', wanted, String(types[index]));
    geometry = wanted;
  } else {
    geometry = names.find((_, index) => types[index] === 'GEOMETRY') ?? null;
  }
  const bbox = names.indexOf('bbox');
  const hasBbox = geometry !== null && wanted === undefined && bbox >= 0 && isBboxCovering(types[bbox] ?? '');
  return { names, types, geometry, hasBbox };
}

/** Whether a column of this DuckDB type is a GeoParquet 1.1 bbox covering: STRUCT(xmin, ymin, xmax, ymax) of DOUBLE. */
export function isBboxCovering(type: string): boolean {
  return /^STRUCT\("?xmin"? DOUBLE, "?ymin"? DOUBLE, "?xmax"? DOUBLE, "?ymax"? DOUBLE\)$/.test(type);
}

/**
 * The SQL test that a row may meet an envelope: by the `bbox` covering when there is one (row groups are then
 * skipped by its statistics), else by `st_intersects_extent` on the geometry expression (a GEOMETRY value).
 */
export function envelopeTest(geometry: string, hasBbox: boolean, [west, south, east, north]: Envelope): string {
  return hasBbox
    ? `bbox.xmax >= ${west} AND bbox.xmin <= ${east} AND bbox.ymax >= ${south} AND bbox.ymin <= ${north}`
    : `st_intersects_extent(${geometry}, st_geomfromwkb(from_hex('${Buffer.from(encodeWkb({ type: 'Polygon', coordinates: [[[west, south], [east, south], [east, north], [west, north], [west, south]]] })).toString('hex')}')))`;
}

/** A box [west, south, east, north] in the coordinates of the data. */
export type Envelope = [west: number, south: number, east: number, north: number];

/** A CRS84 box in the file's CRS: densified edges, and latitudes kept off the poles, where projections diverge. */
export function toFileBox(box: Envelope, crs: string): Envelope {
  if (isLonLat(crs)) return box;
  const [west, south, east, north] = box;
  return reprojectBounds([west, Math.max(south, -89.9), east, Math.min(north, 89.9)], 'EPSG:4326', crs);
}

/** The geometry column as WKB: `st_asbinary` of a GEOMETRY, a WKB BLOB as it is. */
export function wkbExpression(shape: ResultShape): string {
  const column = quoteIdentifier(shape.geometry!);
  return shape.types[shape.names.indexOf(shape.geometry!)] === 'GEOMETRY' ? `st_asbinary(${column})` : column;
}
