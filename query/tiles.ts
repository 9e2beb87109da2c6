import type { DuckDBConnection } from '@duckdb/node-api';
import { DEFAULT_TILE_BUFFER, encodeTile, tileBounds, tileWrapBounds, type TileFeature } from '../core/geo/mvt.ts';
import { quoteIdentifier } from '../core/sql.ts';
import { queryFailure } from './errors.ts';
import type { QueryTask, TileBatchTask, TileValue } from './protocol.ts';
import { describeResult, envelopeTest, subquery, wkbExpression, type ColumnMemo, type Envelope } from './result-shape.ts';
import { createValueConverter } from './values.ts';

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
