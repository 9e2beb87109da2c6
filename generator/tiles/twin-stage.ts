/**
 * The features of a GeoParquet file staged for tiling in a DuckDB database on disk, so that making a twin holds
 * no more of the file in memory than DuckDB's memory limit and one tile's features (generator/tiles/pmtiles-twin.ts).
 *
 * The file is streamed once, a chunk at a time, to find each feature's box (DuckDB here has no spatial
 * extension, so the WKB is read in JavaScript), and the boxes are appended to a table beside the features'
 * geometry and scalar columns. Each zoom's tiles then come out of one query, sorted by PMTiles tile id: every
 * tile a feature's box meets (with the encoder's buffer, wrapping at ±180°), with all its features where it
 * will keep them all, or only the first feature (in file order) of each cell of the finest thinning grid where
 * it will be thinned. DuckDB sorts, groups and joins out of core, so the memory does not grow with the file.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import { isLonLat, resolveCrs } from '../../core/geo/crs.ts';
import { DEFAULT_TILE_BUFFER, DEFAULT_TILE_EXTENT, type TileFeature } from '../../core/geo/mvt.ts';
import { bboxOfGeometry, decodeWkb } from '../../core/geo/wkb.ts';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';
import { zxyToTileId } from '../../runtime/pmtiles-tile-id.ts';

/**
 * Finest thinning grid, as a power of two of cells per tile side: 32, a cell of 8 pixels of a 256-pixel tile
 * (16 of MapLibre's 512), about the width of a drawn point. A thinned tile keeps at most one feature per cell
 * however much room the size cap leaves: finer grids drew no more on screen and cost more to draw. With 256
 * cells, the 1M-point twin's world view was four tiles of 4,096 points (340 KB each), and the file page took
 * 1.1–2.5 s to its first screen in headless Chromium on 2 cores, software-rendered; see BENCHMARKS.md.
 */
export const FINEST_GRID_LEVEL = 5;

/** A GeoParquet file without a geometry column has no twin; the build's inspection of the file says why, once. */
export class NoGeometryError extends Error {
  override name = 'NoGeometryError';
}

/** Scalar column types that become feature properties, as in query tiles (query/tiles.ts). */
const SCALAR = /^(VARCHAR|BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL.*|DATE|TIMESTAMP.*)$/;
const MAX_LAT = 85.0511287798066;
const CELLS = 2 ** FINEST_GRID_LEVEL;

function mercatorX(lon: number): number {
  return (Math.min(180, Math.max(-180, lon)) + 180) / 360;
}

function mercatorY(lat: number): number {
  const sin = Math.sin((Math.min(MAX_LAT, Math.max(-MAX_LAT, lat)) * Math.PI) / 180);
  return 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI);
}

/** A DuckDB value as an MVT property value. */
function toProperty(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  const text = String(value);
  const number = Number(text);
  // DECIMAL values print as numbers; dates and timestamps as ISO text.
  return /^-?\d+(\.\d+)?$/.test(text) && Number.isFinite(number) ? number : text;
}

/** A number as a DuckDB DOUBLE literal (a bare `0.25` would be a DECIMAL, whose arithmetic differs). */
function double(value: number): string {
  return `CAST(${value} AS DOUBLE)`;
}

/** A tile as it comes out of the staged features: its address, its features in file order, and their cells. */
export interface StagedTile {
  x: number;
  y: number;
  /** Features of the tile in all: more than `features` when only the first of each cell came out. */
  count: number;
  /** The tile's features (all, or the first of each finest cell), in file order. */
  features: TileFeature[];
  /** Each feature's cell of the finest grid, `cx * 2^FINEST_GRID_LEVEL + cy`, by its box's centre. */
  cells: number[];
}

/** A file's features staged for tiling. `close` drops the staging database. */
export interface StagedFeatures {
  /** Features with a geometry to draw. */
  count: number;
  /** WGS84 [west, south, east, north] of every feature. */
  bounds: [number, number, number, number];
  fields: Record<string, 'Number' | 'String' | 'Boolean'>;
  /** Whether the features are kept in memory too (see FEATURE_CACHE_BYTES). */
  cached: boolean;
  /** The first `limit` features, in file order. */
  first: (limit: number) => Promise<TileFeature[]>;
  /** Boxes (Web Mercator 0–1, y down) and positions of every `step`th feature of more than one position. */
  sampledShapes: (step: number) => Promise<{ box: [number, number, number, number]; positions: number }[]>;
  /** The typical gap between neighbouring points (see pmtiles-twin.ts), or undefined without points. */
  pointSpacing: () => Promise<number | undefined>;
  /** The most features any tile of zoom z holds. */
  mostPerTile: (z: number) => Promise<number>;
  /** Zoom z's tiles in tile-id order; a tile with more than `fullLimit` features gives the first of each cell. */
  tiles: (z: number, fullLimit: number) => AsyncGenerator<StagedTile>;
  close: () => Promise<void>;
}

/** Options of {@link stageFeatures}. */
export interface StageOptions {
  /** Features estimated to take at most this much memory are kept in memory as well; see FEATURE_CACHE_BYTES. */
  cacheBytes?: number;
}

/**
 * Memory the features of a file may take in JavaScript for them to be read out of the staging database once
 * and kept, rather than once per zoom (reading rows out of DuckDB is most of a zoom's time otherwise), estimated
 * from its footer as the geometry column's bytes plus 96 a feature and 48 a property: more than V8 was measured to
 * take, 389 bytes a feature of the sample's cities (8 properties, 501 estimated) and 413 of 1M synthetic points
 * (10 properties, 597 estimated).
 */
export const FEATURE_CACHE_BYTES = 256 * 1024 ** 2;

/**
 * DuckDB's memory limit for staging a twin: past it, its sorts, groupings and joins spill to disk, so a twin's
 * peak memory does not grow with its file. DuckDB's own RSS comes to about twice its limit: the 10M-point twin
 * peaked at 1.25 GB with 384 MB and at 0.70 GB with this, in about the same time (BENCHMARKS.md).
 */
export const TWIN_DUCKDB_MEMORY = '128MB';

/** The settings of a DuckDB instance that makes twins: one thread, TWIN_DUCKDB_MEMORY, spills under the OS's temporary folder. */
export function twinInstanceOptions(): Record<string, string> {
  return { threads: '1', memory_limit: TWIN_DUCKDB_MEMORY, temp_directory: join(tmpdir(), `geoshelf-twin-spill-${process.pid}-${threadId}`) };
}

/** Per zoom: every tile each feature's box meets (`key` = x·2^z + y), with the feature's finest cell there. */
function tilesOfFeatures(z: number): string {
  const n = 2 ** z;
  const margin = double(DEFAULT_TILE_BUFFER / DEFAULT_TILE_EXTENT);
  const scale = double(n * CELLS);
  return `
    WITH spans AS (
      SELECT i, (x0 + x1) / 2 AS cx, (y0 + y1) / 2 AS cy,
        floor(x0 * ${double(n)} - ${margin})::BIGINT AS tx0, floor(x1 * ${double(n)} + ${margin})::BIGINT AS tx1,
        greatest(0, floor(y0 * ${double(n)} - ${margin}))::BIGINT AS ty0, least(${n - 1}, floor(y1 * ${double(n)} + ${margin}))::BIGINT AS ty1
      FROM features
    ), columns AS (
      SELECT i, cx, cy, ty0, ty1,
        unnest(CASE WHEN tx1 - tx0 + 1 >= ${n} THEN range(0, ${n}) ELSE list_distinct(list_transform(range(tx0, tx1 + 1), lambda v: ((v % ${n}) + ${n}) % ${n})) END) AS tx
      FROM spans
    ), cells AS (
      SELECT i, cx, cy, tx, unnest(range(ty0, ty1 + 1)) AS ty FROM columns
    )
    SELECT i, tx * ${n} + ty AS key,
      (least(${CELLS - 1}, greatest(0, floor(cx * ${scale} - tx * ${CELLS})))::INTEGER * ${CELLS}
        + least(${CELLS - 1}, greatest(0, floor(cy * ${scale} - ty * ${CELLS})))::INTEGER) AS cell
    FROM cells`;
}

/** Spreads a 16-bit integer's bits to the even bits (Morton order), as pmtiles-twin.ts's JavaScript did. */
const SPREAD_MACROS = [
  'CREATE OR REPLACE TEMP MACRO spread1(v) AS (v | (v << 8)) & 16711935',
  'CREATE OR REPLACE TEMP MACRO spread2(v) AS (spread1(v) | (spread1(v) << 4)) & 252645135',
  'CREATE OR REPLACE TEMP MACRO spread3(v) AS (spread2(v) | (spread2(v) << 2)) & 858993459',
  'CREATE OR REPLACE TEMP MACRO spread(v) AS (spread3(v) | (spread3(v) << 1)) & 1431655765',
];

/**
 * Removes the staging and spill folders of processes that are gone: a build stopped while making a twin (killed,
 * say) leaves its staging database, as large as the file or more, in the temporary folder.
 */
async function removeOrphans(): Promise<void> {
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  await Promise.all(names.map(async (name) => {
    const pid = /^geoshelf-twin-(?:stage|spill)-(\d+)-/.exec(name)?.[1];
    if (!pid || isRunning(Number(pid))) return;
    await rm(join(tmpdir(), name), { recursive: true, force: true });
  }));
}

/** Whether a process of this id exists (one of another user's counts too). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stages made so far in this thread, for their databases' names. */
let staged = 0;

/** A stage's connection, and its instance and database for the appenders' connections. */
interface StageDatabase {
  instance: DuckDBInstance;
  connection: DuckDBConnection;
  database: string;
}

/**
 * Streams `source` into a staging database: its longitude/latitude features with their boxes, geometry and
 * scalar columns. Throws {@link NoGeometryError} without a geometry column, and an error for another CRS.
 */
export async function stageFeatures(instance: DuckDBInstance, source: string, options: StageOptions = {}): Promise<StagedFeatures> {
  await removeOrphans();
  const folder = await mkdtemp(join(tmpdir(), `geoshelf-twin-stage-${process.pid}-`));
  const connection = await instance.connect();
  // Attached databases are seen by every connection of the instance: each stage has a name of its own.
  const database = `twin_${++staged}`;
  const close = async () => {
    await connection.run('USE memory').catch(() => undefined);
    await connection.run(`DETACH DATABASE IF EXISTS ${database}`).catch(() => undefined);
    connection.closeSync();
    await rm(folder, { recursive: true, force: true });
  };
  try {
    return await stageInto({ instance, connection, database }, source, folder, close, options.cacheBytes ?? FEATURE_CACHE_BYTES);
  } catch (error) {
    await close();
    throw error;
  }
}

async function stageInto(stage: StageDatabase, source: string, folder: string, close: () => Promise<void>, cacheBytes: number): Promise<StagedFeatures> {
  const { instance, connection, database } = stage;
  const file = quoteLiteral(source);
  const kv = (await connection.runAndReadAll(`SELECT decode(value) AS value FROM parquet_kv_metadata(${file}) WHERE decode(key) = 'geo'`)).getRowObjects();
  const geo = kv[0] ? (JSON.parse(String(kv[0].value)) as { primary_column?: string; columns?: Record<string, { crs?: unknown }> }) : undefined;
  const described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${file})`)).getRowObjects().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
  const geometry = described.find((column) => column.name === geo?.primary_column) ?? described.find((column) => column.type === 'GEOMETRY');
  if (!geometry) throw new NoGeometryError('the file has no geometry column');
  const declared = geo?.columns?.[geometry.name];
  const crs = declared && 'crs' in declared ? (declared.crs === null ? null : resolveCrs(declared.crs)) : 'OGC:CRS84';
  if (!crs || !isLonLat(crs)) throw new Error(`the geometries are in ${crs ?? 'an unknown CRS'}, not longitude/latitude; twins are made of longitude/latitude files only`);
  const properties = described.filter((column) => column.name !== geometry.name && SCALAR.test(column.type));
  const wkb = geometry.type === 'GEOMETRY' ? `st_asbinary(${quoteIdentifier(geometry.name)})` : quoteIdentifier(geometry.name);

  await connection.run(`ATTACH ${quoteLiteral(join(folder, 'twin.duckdb'))} AS ${database}`);
  await connection.run(`USE ${database}`);
  for (const macro of SPREAD_MACROS) await connection.run(macro);
  // Values JavaScript would turn into the same numbers and text come out of DuckDB as such, which is cheaper
  // than its BigInts, decimals and dates (a large file's rows are read once per zoom).
  const columns = properties.map((column, index) => {
    const name = quoteIdentifier(column.name);
    const cast = /^(BIGINT|UBIGINT|DECIMAL.*)$/.test(column.type) ? 'DOUBLE' : column.type === 'DATE' ? 'VARCHAR' : undefined;
    return `${cast ? `CAST(${name} AS ${cast})` : name} AS p${index}`;
  });
  const featureColumns = ['g', ...columns.map((_, index) => `p${index}`)].join(', ');
  const toFeature = (values: DuckDBValue[][], row: number, offset: number): TileFeature => {
    const props: TileFeature['properties'] = {};
    properties.forEach((column, index) => (props[column.name] = toProperty(values[offset + 1 + index]![row])));
    return { wkb: (values[offset]![row] as { bytes: Uint8Array }).bytes, properties: props };
  };
  const fields = Object.fromEntries(properties.map((column) => [column.name, column.type === 'BOOLEAN' ? 'Boolean' : column.type === 'VARCHAR' || /^(DATE|TIMESTAMP)/.test(column.type) ? 'String' : 'Number'] as const));

  // Whether to keep the features is decided before reading them, from the file's footer: the geometry column's
  // bytes and a cost per row, so that a file too large to keep never has part of it read into memory.
  const [[wkbBytes, rowCount]] = (await connection.runAndReadAll(`
    SELECT coalesce(sum(total_uncompressed_size) FILTER (WHERE path_in_schema = ${quoteLiteral(geometry.name)}), 0), (SELECT count(*) FROM read_parquet(${file}))
    FROM parquet_metadata(${file})`)).getRows() as [[bigint, bigint]];
  const cached: TileFeature[] | undefined = Number(wkbBytes) + Number(rowCount) * (96 + 48 * properties.length) <= cacheBytes ? [] : undefined;

  // One row per row of the file, in file order: the feature's index among those drawn, or NULL for a row
  // without a geometry to draw, so that a positional join can put each box beside its row.
  await connection.run('CREATE TABLE boxes (i BIGINT, x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE, pos INTEGER)');
  // The appender has a connection of its own: its flushes would end the file's stream on this one.
  const writer = await instance.connect();
  const bounds: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  let rows = 0;
  let count = 0;
  try {
    const appender = await writer.createAppender('boxes', 'main', database);
    // The properties are read here only to be kept.
    const reader = await connection.stream(`SELECT ${[`${wkb} AS g`, ...(cached ? columns : [])].join(', ')} FROM read_parquet(${file})`);
    for (let chunk = await reader.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await reader.fetchChunk()) {
      rows += chunk.rowCount;
      const values = chunk.getColumns();
      for (let row = 0; row < chunk.rowCount; row++) {
        const blob = values[0]![row] as { bytes: Uint8Array } | null;
        let box: [number, number, number, number] | null = null;
        if (blob) {
          try {
            box = bboxOfGeometry(decodeWkb(blob.bytes));
          } catch {
            box = null;
          }
        }
        if (!box || !box.every(Number.isFinite)) {
          for (let column = 0; column < 6; column++) appender.appendNull();
          appender.endRow();
          continue;
        }
        const [west, south, east, north] = box;
        bounds[0] = Math.min(bounds[0], west);
        bounds[1] = Math.min(bounds[1], south);
        bounds[2] = Math.max(bounds[2], east);
        bounds[3] = Math.max(bounds[3], north);
        appender.appendBigInt(BigInt(count++));
        appender.appendDouble(mercatorX(west));
        appender.appendDouble(mercatorY(north));
        appender.appendDouble(mercatorX(east));
        appender.appendDouble(mercatorY(south));
        // Points are a position each; a line or polygon about one per 16 WKB bytes (two doubles).
        appender.appendInteger(Math.max(1, Math.floor((blob!.bytes.length - 9) / 16)));
        appender.endRow();
        cached?.push(toFeature(values, row, 0));
      }
    }
    appender.closeSync();
  } finally {
    writer.closeSync();
  }
  if (BigInt(rows) !== rowCount) throw new Error(`the file's rows were read only in part (${rows} of ${rowCount})`);
  // Kept in memory, the features need only their boxes here; otherwise each box goes beside its row.
  await connection.run(cached
    ? 'CREATE TABLE features AS SELECT * FROM boxes WHERE i IS NOT NULL'
    : `CREATE TABLE features AS
       SELECT boxes.*, data.* FROM boxes POSITIONAL JOIN (SELECT ${[`${wkb} AS g`, ...columns].join(', ')} FROM read_parquet(${file})) data
       WHERE boxes.i IS NOT NULL`);
  await connection.run('DROP TABLE boxes');

  const readFeatures = async (limit: number): Promise<TileFeature[]> => {
    const result = await connection.runAndReadAll(`SELECT ${featureColumns} FROM features ORDER BY i LIMIT ${limit}`);
    const values = result.getColumns();
    return Array.from({ length: result.currentRowCount }, (_, row) => toFeature(values, row, 0));
  };

  return {
    count,
    bounds,
    fields,
    cached: cached !== undefined,
    first: async (limit) => cached?.slice(0, limit) ?? readFeatures(limit),
    sampledShapes: async (step) => {
      const rows = (await connection.runAndReadAll(`SELECT x0, y0, x1, y1, pos FROM features WHERE i % ${step} = 0 AND pos >= 2 ORDER BY i`)).getRows();
      return rows.map(([x0, y0, x1, y1, pos]) => ({ box: [x0, y0, x1, y1] as [number, number, number, number], positions: pos as number }));
    },
    pointSpacing: async () => {
      const [row] = (await connection.runAndReadAll(`
        WITH points AS (
          SELECT least(65535, floor(x0 * 65536))::BIGINT AS x, least(65535, floor(y0 * 65536))::BIGINT AS y FROM features WHERE pos = 1
        ), gaps AS (
          SELECT sqrt(((x - lag(x) OVER w) ^ 2 + (y - lag(y) OVER w) ^ 2)::DOUBLE) / 65536 AS gap
          FROM points WINDOW w AS (ORDER BY spread(x) * 2 + spread(y))
        )
        SELECT sum(ln(gap)) AS logs, count(*) AS gaps FROM gaps WHERE gap > 0`)).getRows();
      const gaps = Number(row?.[1] ?? 0);
      return gaps === 0 ? undefined : Math.exp(Number(row![0]) / gaps);
    },
    mostPerTile: async (z) => {
      const [row] = (await connection.runAndReadAll(`SELECT max(features) FROM (SELECT key, count(*) AS features FROM (${tilesOfFeatures(z)}) GROUP BY key)`)).getRows();
      return Number(row?.[0] ?? 0);
    },
    tiles: (z, fullLimit) => tilesOfZoom(stage, z, fullLimit, cached ? { columns: 'chosen.i', joinsFeatures: false, feature: (values, row) => cached[Number(values[4]![row])]! } : { columns: featureColumns, joinsFeatures: true, feature: toFeature }),
    close,
  };
}

/** How a tile's features come out: the columns read after the tile's own, and the feature made of them. */
interface FeatureReader {
  columns: string;
  /** Whether the columns come from the staged features, joined by `i` (not when the features are kept in memory). */
  joinsFeatures: boolean;
  feature: (values: DuckDBValue[][], row: number, offset: number) => TileFeature;
}

/**
 * Zoom z's tiles in tile-id order, each with its features (or the first of each finest cell), in file order.
 * Rows are sorted by tile id in DuckDB, out of core; only one tile's features are held here at a time.
 */
async function* tilesOfZoom({ instance, connection, database }: StageDatabase, z: number, fullLimit: number, reader: FeatureReader): AsyncGenerator<StagedTile> {
  const n = 2 ** z;
  await connection.run(`CREATE OR REPLACE TABLE placed AS ${tilesOfFeatures(z)}`);
  // The tile ids (a Hilbert curve per zoom) are computed here, for the occupied tiles only, and joined back.
  await connection.run('CREATE OR REPLACE TABLE tiles (key BIGINT, id BIGINT, features BIGINT)');
  const writer = await instance.connect();
  try {
    const appender = await writer.createAppender('tiles', 'main', database);
    const counts = await connection.stream('SELECT key, count(*) FROM placed GROUP BY key');
    for (let chunk = await counts.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await counts.fetchChunk()) {
      const [keys, features] = chunk.getColumns() as [bigint[], bigint[]];
      keys.forEach((key, row) => {
        const k = Number(key);
        appender.appendBigInt(key);
        appender.appendBigInt(BigInt(zxyToTileId(z, Math.floor(k / n), k % n)));
        appender.appendBigInt(features[row]!);
        appender.endRow();
      });
    }
    appender.closeSync();
  } finally {
    writer.closeSync();
  }
  const rows = await connection.stream(`
    WITH chosen AS (
      SELECT placed.key, placed.i, placed.cell FROM placed JOIN tiles USING (key) WHERE tiles.features <= ${fullLimit}
      UNION ALL
      SELECT placed.key, min(placed.i), placed.cell FROM placed JOIN tiles USING (key) WHERE tiles.features > ${fullLimit} GROUP BY placed.key, placed.cell
    )
    SELECT tiles.id, tiles.key, tiles.features, chosen.cell, ${reader.columns}
    FROM chosen JOIN tiles USING (key)${reader.joinsFeatures ? ' JOIN features USING (i)' : ''}
    ORDER BY tiles.id, chosen.i`);
  let current: StagedTile | undefined;
  let currentId = -1n;
  for (let chunk = await rows.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await rows.fetchChunk()) {
    const values = chunk.getColumns();
    for (let row = 0; row < chunk.rowCount; row++) {
      const id = values[0]![row] as bigint;
      if (id !== currentId) {
        if (current) yield current;
        const key = Number(values[1]![row]);
        current = { x: Math.floor(key / n), y: key % n, count: Number(values[2]![row]), features: [], cells: [] };
        currentId = id;
      }
      current!.cells.push(values[3]![row] as number);
      current!.features.push(reader.feature(values, row, 4));
    }
  }
  if (current) yield current;
  await connection.run('DROP TABLE placed; DROP TABLE tiles');
}
