import { readFileSync } from 'node:fs';
import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import proj4 from 'proj4';
import { encodeWkb } from '../core/geo/wkb.ts';
import { scanWkbColumn } from '../runtime/geometry-scan.ts';
import { createExtent, finishLonLatExtent, growExtent } from '../core/geo/wkb-inspect.ts';
import { DEFAULT_TILE_BUFFER, encodeTile, tileBounds, tileWrapBounds, type TileFeature } from '../core/geo/mvt.ts';
import { logicalType, quoteIdentifier } from '../core/sql.ts';
import { queryFailure } from './errors.ts';
import type { BoundsValue, PageValue, QueryTask, TileBatchTask, TileValue } from './protocol.ts';
import { stripTrailingSemicolons } from './sql-source.ts';
import { STEP, type StepName } from './steps.ts';
import { createValueConverter, type JsonValue } from './values.ts';

/** The user's SQL as a subquery: newlines keep a trailing `--` comment from swallowing the parenthesis. */
export function subquery(sql: string): string {
  // A final `;` ends the statement; inside parentheses it would break it.
  return `(\n${stripTrailingSemicolons(sql)}\n) AS __geoshelf_result`;
}

/** Bytes this process has read through system calls so far (Linux); 0 where /proc is not there. */
function bytesReadSoFar(): number {
  try {
    return Number(/rchar:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
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
async function describeResult(connection: DuckDBConnection, sql: string, wanted: string | undefined, memo?: ColumnMemo): Promise<ResultShape> {
  let columns = memo?.get(sql);
  if (!columns) {
    const prepared = await connection.prepare(`SELECT * FROM ${subquery(sql)}`);
    try {
      const indexes = Array.from({ length: prepared.columnCount }, (_, index) => index);
      columns = { names: indexes.map((index) => prepared.columnName(index)), types: indexes.map((index) => String(prepared.columnType(index))) };
    } finally {
      prepared.destroySync();
    }
    memo?.set(sql, columns);
    if (memo && memo.size > COLUMN_MEMO_SIZE) memo.delete(memo.keys().next().value!);
  }
  return shapeOf(columns.names, columns.types, wanted);
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

function wkbExpression(shape: ResultShape): string {
  const column = quoteIdentifier(shape.geometry!);
  return shape.types[shape.names.indexOf(shape.geometry!)] === 'GEOMETRY' ? `st_asbinary(${column})` : column;
}

/**
 * The rows of a page as DuckDB gives them, one more than asked to know whether more follow, with the result's
 * columns and shape and the bytes read from files meanwhile: what a JSON page and an Arrow page are made from.
 */
export async function readPageRows(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'page' }>, isInterrupted: () => boolean, lap?: (step: StepName) => void) {
  const before = bytesReadSoFar();
  // Read whole rather than streamed: the LIMIT bounds it, and in a fresh instance a streamed page of 100 rows
  // took 2 ms longer (measured on 1M points: 30.5 ms against 32.6 ms; no slower for 1,000 or 5,000 rows).
  const reader = await connection.runAndReadAll(`SELECT * FROM ${subquery(task.sql)} LIMIT ${task.limit + 1} OFFSET ${task.offset}`);
  lap?.(STEP.query);
  if (isInterrupted()) throw queryFailure('query_timeout');
  const bytesRead = Math.max(0, bytesReadSoFar() - before);
  const names = reader.columnNames();
  const types = reader.columnTypes();
  return { names, types, shape: shapeOf(names, types.map(String), task.geometryColumn), raw: reader.getRows(), bytesRead };
}

/**
 * One page of the result: rows `offset` to `offset + limit`, cut earlier when the JSON would pass the response
 * cap. One extra row is read to know whether more follow.
 */
export async function runPage(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'page' }>, isInterrupted: () => boolean, lap?: (step: StepName) => void): Promise<PageValue> {
  const { names, types, shape, raw, bytesRead } = await readPageRows(connection, task, isInterrupted, lap);
  const project = task.resultCrs ? proj4('EPSG:4326', task.resultCrs).forward : undefined;
  const converter = createValueConverter(project ? { project: (position) => project(position) as [number, number] } : {});
  const rows: string[] = [];
  let size = 2;
  let truncated = false;
  for (const values of raw.slice(0, task.limit)) {
    // Column names come from the SQL: no prototype, so a column named __proto__ stays a property.
    const row: Record<string, JsonValue> = Object.create(null);
    names.forEach((name, index) => (row[name] = converter.convert(values[index] ?? null, name === shape.geometry)));
    const text = JSON.stringify(row);
    if (size + text.length + 1 > task.settings.maxResponseBytes) {
      truncated = true;
      break;
    }
    size += text.length + 1;
    rows.push(text);
  }
  // No page can hold a row larger than the cap; answering an empty page would send clients round in circles.
  if (truncated && rows.length === 0) throw queryFailure('row_too_large', task.settings.maxResponseBytes);
  const warnings = [...converter.warnings];
  if (truncated) warnings.push(`The page was cut at ${rows.length} rows to stay under ${task.settings.maxResponseBytes} bytes; ask for the next page at next_offset.`);
  return {
    columns: names.map((name, index) => ({ name, type: columnType(types[index]!, name === shape.geometry), nullable: true })),
    rowsJson: Buffer.from(`[${rows.join(',')}]`),
    rowCount: rows.length,
    hasMore: truncated || raw.length > task.limit,
    truncated,
    warnings,
    bytesRead,
    geometryColumn: shape.geometry,
  };
}

function columnType(type: DuckDBType, isGeometry: boolean): string {
  return isGeometry ? 'geometry' : logicalType(String(type));
}

/**
 * The WGS84 extent of the whole result, west > east when it straddles ±180° (`core/geo/lon-extent.ts`): from
 * the GeoParquet bbox covering when the result carries it, otherwise by streaming every geometry and
 * decoding its WKB part by part.
 */
export async function runBounds(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'bounds' }>, isInterrupted: () => boolean, memo?: ColumnMemo): Promise<BoundsValue> {
  const shape = await describeResult(connection, task.sql, task.geometryColumn, memo);
  if (!shape.geometry) throw queryFailure('no_geometry');
  const bounds = shape.hasBbox
    ? await readCoveringBounds(connection, task.sql, shape, isInterrupted)
    : (await scanWkbColumn(connection, subquery(task.sql), wkbExpression(shape))).lonLatExtent;
  if (isInterrupted()) throw queryFailure('query_timeout');
  if (!bounds) throw queryFailure('empty_result');
  return { bounds };
}

/**
 * The group of a row: its west edge rounded to a whole degree (DuckDB rounds half to even), so the rows of a
 * group start within one degree of each other; NULL for a west edge that is null, not finite or past ±32,767.
 */
const GROUP_KEY = 'TRY_CAST(bbox.xmin AS SMALLINT)';

/**
 * Bounds from the bbox covering, in one aggregate per group of rows starting in the same degree (at most 361
 * groups). Where every row of a group is one interval of longitude within ±180° and ±90°, no wider than 180°,
 * the group's box is as good as decoding its rows: only a gap wider than 180° makes a box cross
 * (`lon-extent.ts`), and none fits inside a row that narrow or inside the degree the group's rows start in.
 * The group's own extremes tell whether that holds: the greatest `xmin - xmax` is above 0 when a row crosses
 * (west > east), an east edge past the group's degree + 179.5° means a row may be wider than 180° (Fiji's
 * halves on either side of ±180° make the world), and NaN anywhere shows through the greatest values (the
 * least of `ymin` is read as the greatest of `-ymin` for that). The rows of any other group, and those
 * without a usable west edge, are then decoded part by part; a result without them reads no geometry.
 * Measured on 1M points, this aggregate costs 1.1–1.25 times a plain min/max, where testing each row with a
 * CASE cost 1.3–1.45 times.
 */
async function readCoveringBounds(connection: DuckDBConnection, sql: string, shape: ResultShape, isInterrupted: () => boolean): Promise<[number, number, number, number] | null> {
  const groups = (await connection.runAndReadAll(
    `SELECT ${GROUP_KEY} AS __group, min(bbox.xmin), max(-bbox.ymin), max(bbox.xmax), max(bbox.ymax), max(bbox.xmin - bbox.xmax)
      FROM ${subquery(sql)} GROUP BY __group`,
  )).getRows();
  const extent = createExtent();
  const decode: (number | null)[] = [];
  for (const [group, ...values] of groups as [number | null, ...(number | null)[]][]) {
    // A group of rows without a bbox (null geometries) has null extremes: nothing to read.
    if (values.every((value) => value === null)) continue;
    const [west, negatedSouth, east, north, crossing] = values.map((value) => value ?? NaN) as [number, number, number, number, number];
    const south = -negatedSouth;
    // Comparisons with NaN are false: a null or NaN anywhere sends the group to be decoded.
    const narrow = group !== null && west >= -180 && east <= 180 && south >= -90 && north <= 90 && crossing <= 0 && east <= group + 179.5;
    if (narrow) growExtent(extent, west, south, east, north);
    else decode.push(group);
  }
  if (decode.length === 0) return finishLonLatExtent(extent);
  if (isInterrupted()) throw queryFailure('query_timeout');
  const keys = decode.filter((group) => group !== null);
  const wanted = [...(keys.length > 0 ? [`${GROUP_KEY} IN (${keys.join(', ')})`] : []), ...(keys.length < decode.length ? [`${GROUP_KEY} IS NULL`] : [])].join(' OR ');
  return (await scanWkbColumn(connection, `(SELECT * FROM ${subquery(sql)} WHERE (${wanted}) AND bbox IS NOT NULL) AS __geoshelf_wide`, wkbExpression(shape), { extent })).lonLatExtent;
}

/**
 * The vector tile z/x/y of the result: the rows whose geometry may meet the tile (by the bbox covering when
 * present, else by `st_intersects_extent`), and for a tile at the world's west or east edge the rows within
 * its buffer across ±180°, at most the tile cap, encoded as MVT with their scalar columns.
 */
export async function runTile(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'tile' }>, isInterrupted: () => boolean, memo?: ColumnMemo): Promise<TileValue> {
  const query = await prepareTiles(connection, task, memo);
  return readTile(connection, query, task.z, task.x, task.y, isInterrupted);
}

/**
 * Tiles of one zoom, each answered through `answer` (by its index in `task.tiles`) as soon as it is encoded.
 * Neighbouring tiles of a row, up to eight, are read by one scan of their joint envelope, each row marked with
 * the tiles it meets; a group whose scan passes four tiles' worth of rows is read tile by tile instead, so
 * memory stays bounded and every tile gets the rows it would get alone.
 */
export async function runTiles(connection: DuckDBConnection, task: TileBatchTask, isInterrupted: () => boolean, answer: (index: number, value: TileValue) => void, memo?: ColumnMemo): Promise<void> {
  const query = await prepareTiles(connection, task, memo);
  const { z, tiles } = task;
  for (const group of groupTiles(tiles)) {
    if (isInterrupted()) throw queryFailure('query_timeout');
    const values = group.length > 1 ? await readTileGroup(connection, query, z, group.map((index) => tiles[index]!), isInterrupted) : undefined;
    for (const [position, index] of group.entries()) {
      answer(index, values?.[position] ?? await readTile(connection, query, z, tiles[index]!.x, tiles[index]!.y, isInterrupted));
    }
  }
}

/** What reading any tile of a result needs: its shape, the columns to select and the test of a tile envelope. */
interface TileQuery {
  sql: string;
  maxFeatures: number;
  properties: string[];
  select: string;
  meets: (envelope: Envelope) => string;
}

/** A box [west, south, east, north] in the coordinates of the data. */
export type Envelope = [west: number, south: number, east: number, north: number];

async function prepareTiles(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'tile' }> | TileBatchTask, memo?: ColumnMemo): Promise<TileQuery> {
  const shape = await describeResult(connection, task.sql, task.geometryColumn, memo);
  if (!shape.geometry) throw queryFailure('no_geometry');
  const geometry = shape.types[shape.names.indexOf(shape.geometry)] === 'GEOMETRY' ? quoteIdentifier(shape.geometry) : `st_geomfromwkb(${quoteIdentifier(shape.geometry)})`;
  const properties = shape.names.filter((name, index) => name !== shape.geometry && /^(VARCHAR|BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL.*|DATE|TIMESTAMP.*)$/.test(shape.types[index] ?? ''));
  return {
    sql: subquery(task.sql),
    maxFeatures: task.settings.tileMaxFeatures,
    properties,
    select: [`${wkbExpression(shape)} AS __wkb`, ...properties.map(quoteIdentifier)].join(', '),
    meets: (envelope) => envelopeTest(geometry, shape.hasBbox, envelope),
  };
}

/**
 * The WGS84 envelope of a tile with its buffer, then, for a tile at the world's west or east edge, the
 * envelopes of what the encoder draws into it from across ±180° (`tileWrapBounds`).
 */
function tileEnvelopes(z: number, x: number, y: number): Envelope[] {
  // The encoder pins latitudes beyond Web Mercator's ±85.05° to the world's edge, so edge tiles must fetch them.
  const reach = ([west, south, east, north]: Envelope): Envelope => [west, y === 2 ** z - 1 ? -90 : south, east, y === 0 ? 90 : north];
  return [tileBounds(z, x, y, DEFAULT_TILE_BUFFER), ...tileWrapBounds(z, x, y, DEFAULT_TILE_BUFFER)].map(reach);
}

/** The SQL test that a row meets any of the envelopes. */
function meetsAny(query: TileQuery, envelopes: Envelope[]): string {
  return envelopes.length === 1 ? query.meets(envelopes[0]!) : `(${envelopes.map((envelope) => query.meets(envelope)).join(' OR ')})`;
}

async function readTile(connection: DuckDBConnection, query: TileQuery, z: number, x: number, y: number, isInterrupted: () => boolean): Promise<TileValue> {
  const limit = query.maxFeatures + 1;
  const reader = await connection.runAndReadAll(`SELECT ${query.select} FROM ${query.sql} WHERE ${meetsAny(query, tileEnvelopes(z, x, y))} LIMIT ${limit}`);
  if (isInterrupted()) throw queryFailure('query_timeout');
  const converter = createValueConverter();
  return encodeRows(query, reader.getRows().map((values) => toFeature(query, converter, values, 0)), z, x, y);
}

/** Tiles of one group from one scan; undefined when the scan passes the row budget (read them one by one). */
async function readTileGroup(connection: DuckDBConnection, query: TileQuery, z: number, tiles: { x: number; y: number }[], isInterrupted: () => boolean): Promise<TileValue[] | undefined> {
  const envelopes = tiles.map(({ x, y }) => tileEnvelopes(z, x, y));
  const own = envelopes.map(([envelope]) => envelope!);
  const joint: Envelope = [Math.min(...own.map((e) => e[0])), Math.min(...own.map((e) => e[1])), Math.max(...own.map((e) => e[2])), Math.max(...own.map((e) => e[3]))];
  // Rows across ±180° that edge tiles draw shifted by 360° lie outside the joint envelope: ask for them too.
  const scan = meetsAny(query, [joint, ...envelopes.flatMap((tile) => tile.slice(1))]);
  const marks = envelopes.map((tile, bit) => `CASE WHEN ${meetsAny(query, tile)} THEN ${2 ** bit} ELSE 0 END`).join(' + ');
  const budget = (query.maxFeatures + 1) * GROUP_ROW_TILES;
  const reader = await connection.streamAndReadUntil(
    `SELECT * FROM (SELECT ${marks} AS __tiles, ${query.select} FROM ${query.sql} WHERE ${scan}) WHERE __tiles <> 0 LIMIT ${budget + 1}`,
    budget + 1,
  );
  if (isInterrupted()) throw queryFailure('query_timeout');
  if (reader.currentRowCount > budget) return undefined;
  const converter = createValueConverter();
  const rows: (TileFeature | null)[][] = tiles.map(() => []);
  for (const values of reader.getRows()) {
    const mask = Number(values[0]);
    let feature: TileFeature | null | undefined;
    rows.forEach((tileRows, bit) => {
      if ((mask & (1 << bit)) === 0 || tileRows.length > query.maxFeatures) return;
      tileRows.push((feature ??= toFeature(query, converter, values, 1)));
    });
  }
  return tiles.map(({ x, y }, index) => encodeRows(query, rows[index]!, z, x, y));
}

/** Rows (at most the cap plus one, which says the tile is cut) encoded as a tile. */
function encodeRows(query: TileQuery, rows: (TileFeature | null)[], z: number, x: number, y: number): TileValue {
  const features = rows.slice(0, query.maxFeatures).filter((feature) => feature !== null);
  const encoded = encodeTile(features, z, x, y, { layerName: 'result', maxFeatures: query.maxFeatures });
  return { bytes: encoded.bytes, features: encoded.features, truncated: encoded.truncated || rows.length > query.maxFeatures };
}

function toFeature(query: TileQuery, converter: ReturnType<typeof createValueConverter>, values: unknown[], first: number): TileFeature | null {
  const wkb = values[first] as { bytes: Uint8Array } | null;
  if (!wkb) return null;
  const properties: TileFeature['properties'] = {};
  query.properties.forEach((name, index) => {
    const value = converter.convert((values[first + 1 + index] ?? null) as Parameters<typeof converter.convert>[0], false);
    properties[name] = typeof value === 'object' ? null : value;
  });
  return { wkb: wkb.bytes, properties };
}

/** Tiles a group may hold (bits of its mark); rows a group scan may read, in tiles' worth. */
const GROUP_TILES = 8;
const GROUP_ROW_TILES = 4;

/** Indexes of `tiles` in groups of neighbours: runs of consecutive x in one row, at most GROUP_TILES long. */
function groupTiles(tiles: { x: number; y: number }[]): number[][] {
  const order = [...tiles.keys()].sort((a, b) => tiles[a]!.y - tiles[b]!.y || tiles[a]!.x - tiles[b]!.x);
  const groups: number[][] = [];
  for (const index of order) {
    const group = groups.at(-1);
    const last = group && tiles[group.at(-1)!]!;
    const tile = tiles[index]!;
    if (group && last && last.y === tile.y && tile.x - last.x <= 1 && group.length < GROUP_TILES) group.push(index);
    else groups.push([index]);
  }
  return groups;
}
