/**
 * The features of a GeoParquet file staged for tiling, so that making a twin holds no more of the file in memory
 * than DuckDB's memory limit, a bucket of tiles and one tile's features (generator/tiles/pmtiles-twin.ts).
 *
 * The file is streamed once, a chunk at a time, to find each feature's box (DuckDB here has no spatial
 * extension, so the WKB is read in JavaScript). The boxes go to a table of a DuckDB database on disk, which
 * counts each zoom's features per tile out of core: every tile a feature's box meets (with the encoder's buffer,
 * wrapping at ±180°). The features themselves, geometry and scalar columns, are written to a feature store on
 * disk (generator/tiles/twin-store.ts), and a zoom's tiles come out of it through buckets on disk in PMTiles
 * tile-id order (generator/tiles/twin-spill.ts): with all their features where they will keep them all, or only
 * the first feature (in file order) of each cell of the finest thinning grid where they will be thinned.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { isLonLat, resolveCrs } from '../../core/geo/crs.ts';
import { DEFAULT_TILE_BUFFER, DEFAULT_TILE_EXTENT, type TileFeature } from '../../core/geo/mvt.ts';
import { bboxOfGeometry, decodeWkb } from '../../core/geo/wkb.ts';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';
import { tilesFromStore, type StagedTile, type StoreTilesOptions } from './twin-spill.ts';
import { FeatureStore, readFirstFeatures, type PropertyValue } from './twin-store.ts';

export { FINEST_GRID_LEVEL, type StagedTile } from './twin-spill.ts';

/** A GeoParquet file without a geometry column has no twin; the build's inspection of the file says why, once. */
export class NoGeometryError extends Error {
  override name = 'NoGeometryError';
}

/** Scalar column types that become feature properties, as in query tiles (query/tiles.ts). */
const SCALAR = /^(VARCHAR|BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL.*|DATE|TIMESTAMP.*)$/;
const MAX_LAT = 85.0511287798066;

function mercatorX(lon: number): number {
  return (Math.min(180, Math.max(-180, lon)) + 180) / 360;
}

function mercatorY(lat: number): number {
  const sin = Math.sin((Math.min(MAX_LAT, Math.max(-MAX_LAT, lat)) * Math.PI) / 180);
  return 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI);
}

/** A DuckDB value as an MVT property value. */
function toProperty(value: unknown): PropertyValue {
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

/** A file's features staged for tiling. `close` drops the staging database. */
export interface StagedFeatures {
  /** Features with a geometry to draw. */
  count: number;
  /** WGS84 [west, south, east, north] of every feature. */
  bounds: [number, number, number, number];
  fields: Record<string, 'Number' | 'String' | 'Boolean'>;
  /** The first `limit` features, in file order. */
  first: (limit: number) => Promise<TileFeature[]>;
  /** Boxes (Web Mercator 0–1, y down) and positions of every `step`th feature of more than one position. */
  sampledShapes: (step: number) => Promise<{ box: [number, number, number, number]; positions: number }[]>;
  /** The typical gap between neighbouring points (see pmtiles-twin.ts), or undefined without points. */
  pointSpacing: () => Promise<number | undefined>;
  /** The most features any tile of zoom z holds. */
  mostPerTile: (z: number) => Promise<number>;
  /** Zoom z's tiles in tile-id order; a tile with more than `fullLimit` features gives the first of each cell. */
  tiles: (z: number, fullLimit: number) => AsyncGenerator<StagedTile, void, undefined>;
  close: () => Promise<void>;
}

/** Options of {@link stageFeatures}. */
export interface StageOptions {
  /** Bytes of a bucket of tiles (twin-spill.ts's BUCKET_BYTES by default). */
  bucketBytes?: number;
  /** Hears the rows of the file read, of all its rows, at each hundredth. */
  progress?: (rows: number, total: number) => void;
}

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

/**
 * Per zoom: every tile each feature's box meets (`key` = x·2^z + y), with the encoder's buffer, wrapping at ±180°
 * (a box narrower than the world meets fewer than 2^z columns, whose wrapped numbers are then distinct). The
 * feature store's reading places the features by the same arithmetic (twin-spill.ts).
 */
function tilesOfFeatures(z: number): string {
  const n = 2 ** z;
  const margin = double(DEFAULT_TILE_BUFFER / DEFAULT_TILE_EXTENT);
  return `
    WITH spans AS (
      SELECT floor(x0 * ${double(n)} - ${margin})::BIGINT AS tx0, floor(x1 * ${double(n)} + ${margin})::BIGINT AS tx1,
        greatest(0, floor(y0 * ${double(n)} - ${margin}))::BIGINT AS ty0, least(${n - 1}, floor(y1 * ${double(n)} + ${margin}))::BIGINT AS ty1
      FROM features
    ), columns AS (
      SELECT ty0, ty1,
        unnest(CASE WHEN tx1 - tx0 + 1 >= ${n} THEN range(0, ${n}) ELSE list_transform(range(tx0, tx1 + 1), lambda v: ((v % ${n}) + ${n}) % ${n}) END) AS tx
      FROM spans
    ), cells AS (
      SELECT tx, unnest(range(ty0, ty1 + 1)) AS ty FROM columns
    )
    SELECT tx * ${n} + ty AS key FROM cells`;
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
    return await stageInto({ instance, connection, database }, source, folder, close, options);
  } catch (error) {
    await close();
    throw error;
  }
}

async function stageInto({ instance, connection, database }: StageDatabase, source: string, folder: string, close: () => Promise<void>, options: StageOptions): Promise<StagedFeatures> {
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
  // than its BigInts, decimals and dates.
  const columns = properties.map((column, index) => {
    const name = quoteIdentifier(column.name);
    const cast = /^(BIGINT|UBIGINT|DECIMAL.*)$/.test(column.type) ? 'DOUBLE' : column.type === 'DATE' ? 'VARCHAR' : undefined;
    return `${cast ? `CAST(${name} AS ${cast})` : name} AS p${index}`;
  });
  const names = properties.map((column) => column.name);
  const fields = Object.fromEntries(properties.map((column) => [column.name, column.type === 'BOOLEAN' ? 'Boolean' : column.type === 'VARCHAR' || /^(DATE|TIMESTAMP)/.test(column.type) ? 'String' : 'Number'] as const));

  const [[rowCount]] = (await connection.runAndReadAll(`SELECT count(*) FROM read_parquet(${file})`)).getRows() as [[bigint]];

  // One row per feature to draw, in file order: its index among them, its box and about how many positions it has.
  await connection.run('CREATE TABLE features (i BIGINT, x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE, pos INTEGER)');
  // The appender has a connection of its own: its flushes would end the file's stream on this one.
  const writer = await instance.connect();
  const storePath = join(folder, 'features');
  let store: FeatureStore | undefined;
  const bounds: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  let rows = 0;
  let count = 0;
  let storeBytes = 0;
  let largest = 0;
  try {
    store = new FeatureStore(storePath);
    const appender = await writer.createAppender('features', 'main', database);
    const reader = await connection.stream(`SELECT ${[`${wkb} AS g`, ...columns].join(', ')} FROM read_parquet(${file})`);
    const total = Number(rowCount);
    let reported = 0;
    for (let chunk = await reader.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await reader.fetchChunk()) {
      rows += chunk.rowCount;
      if (options.progress && rows - reported >= total / 100) {
        reported = rows;
        options.progress(rows, total);
      }
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
        if (!box || !box.every(Number.isFinite)) continue;
        const [west, south, east, north] = box;
        bounds[0] = Math.min(bounds[0], west);
        bounds[1] = Math.min(bounds[1], south);
        bounds[2] = Math.max(bounds[2], east);
        bounds[3] = Math.max(bounds[3], north);
        const mercator: [number, number, number, number] = [mercatorX(west), mercatorY(north), mercatorX(east), mercatorY(south)];
        appender.appendBigInt(BigInt(count++));
        for (const coordinate of mercator) appender.appendDouble(coordinate);
        // Points are a position each; a line or polygon about one per 16 WKB bytes (two doubles).
        appender.appendInteger(Math.max(1, Math.floor((blob!.bytes.length - 9) / 16)));
        appender.endRow();
        store.append(mercator, blob!.bytes, names.map((_, index) => toProperty(values[1 + index]![row])));
      }
    }
    appender.closeSync();
  } finally {
    writer.closeSync();
    if (store) {
      storeBytes = store.close();
      largest = store.largest;
    }
  }
  if (BigInt(rows) !== rowCount) throw new Error(`the file's rows were read only in part (${rows} of ${rowCount})`);
  const stored = { path: storePath, bytes: storeBytes, count, largest, folder };

  return {
    count,
    bounds,
    fields,
    first: async (limit) => readFirstFeatures(stored.path, names, limit),
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
    tiles: (z, fullLimit) => tilesOfZoom(connection, { store: stored, names, z, fullLimit, ...(options.bucketBytes ? { bucketBytes: options.bucketBytes } : {}) }),
    close,
  };
}

/**
 * Zoom z's tiles in tile-id order: DuckDB counts the features of each tile (narrow rows, out of core), and the
 * tiles come out of the feature store through buckets on disk (twin-spill.ts).
 */
async function* tilesOfZoom(connection: DuckDBConnection, options: Omit<StoreTilesOptions, 'counts'>): AsyncGenerator<StagedTile> {
  const keys: number[] = [];
  const counts: number[] = [];
  const result = await connection.stream(`SELECT key, count(*) FROM (${tilesOfFeatures(options.z)}) GROUP BY key ORDER BY key`);
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const [chunkKeys, chunkCounts] = chunk.getColumns() as [bigint[], bigint[]];
    for (let row = 0; row < chunk.rowCount; row++) {
      keys.push(Number(chunkKeys[row]!));
      counts.push(Number(chunkCounts[row]!));
    }
  }
  yield* tilesFromStore({ ...options, counts: { keys: Float64Array.from(keys), counts: Float64Array.from(counts) } });
}
