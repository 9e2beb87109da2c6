import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { encodeWkb } from '../core/geo/wkb.ts';
import { createRandom } from './synthetic-catalog.ts';

const COLOURS = ['red', 'green', 'blue', 'amber', 'violet'];

/**
 * Writes a deterministic GeoParquet file of `rows` points with 10 attribute columns: integers, floats,
 * low- and high-cardinality text, a boolean, a date, and some nulls, plus a GeoParquet 1.1 bbox covering.
 * Rows are ordered by z=4 tile, then id, as GeoParquet writers order rows so the covering's row-group
 * statistics can skip data (`spatialOrder: false` keeps them in random order). Used by the enrichment and
 * query benchmarks; never committed.
 */
export async function writeSyntheticPoints(path: string, rows: number, options: { seed?: number; spatialOrder?: boolean } = {}): Promise<void> {
  const seed = options.seed ?? 3;
  const order = options.spatialOrder === false ? 'id' : 'floor((85 - y) / 170 * 16), floor((x + 180) / 22.5), id';
  const random = createRandom(seed);
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  try {
    await connection.run('CREATE TABLE staging (id BIGINT, category INTEGER, score DOUBLE, x DOUBLE, y DOUBLE, wkb BLOB)');
    const appender = await connection.createAppender('staging');
    for (let row = 0; row < rows; row++) {
      const x = random() * 360 - 180;
      const y = random() * 170 - 85;
      appender.appendBigInt(BigInt(row));
      appender.appendInteger(Math.floor(random() * 50));
      appender.appendDouble(random() * 1000);
      appender.appendDouble(x);
      appender.appendDouble(y);
      appender.appendBlob(encodeWkb({ type: 'Point', coordinates: [x, y] }));
      appender.endRow();
    }
    appender.closeSync();
    await copyPoints(connection, '(SELECT *, st_geomfromwkb(wkb) AS geometry FROM staging)', order, path);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The GeoParquet metadata of the synthetic points: WKB points with a bbox covering. */
const POINTS_GEO = JSON.stringify({
  version: '1.1.0',
  primary_column: 'geometry',
  columns: { geometry: { encoding: 'WKB', geometry_types: ['Point'], covering: { bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] } } } },
});

/** Writes the points of `relation` (id, category, score, x, y and a `geometry`) with their 10 columns to `path`. */
async function copyPoints(connection: DuckDBConnection, relation: string, order: string, path: string): Promise<void> {
  await connection.run(`COPY (
      SELECT id,
        category,
        (category * 37 + id % 11)::INTEGER AS rank,
        score,
        CASE WHEN id % 10 = 3 THEN NULL ELSE round(score / 7, 3) END AS ratio,
        ${sqlList(COLOURS)}[category % ${COLOURS.length} + 1] AS colour,
        'site-' || id::VARCHAR AS code,
        CASE WHEN id % 6 = 0 THEN NULL ELSE 'zone ' || (category % 12)::VARCHAR END AS zone,
        id % 3 = 0 AS active,
        DATE '2020-01-01' + (id % 1461)::INTEGER AS surveyed_on,
        geometry,
        {'xmin': x, 'ymin': y, 'xmax': x, 'ymax': y} AS bbox
      FROM ${relation} ORDER BY ${order}
    ) TO '${path.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880, GEOPARQUET_VERSION 'NONE', KV_METADATA {geo: '${POINTS_GEO}'})`);
}

/**
 * The same columns as {@link writeSyntheticPoints}, for files too large to stage in memory (the 10M- and
 * 100M-point twins of `npm run bench -- twin-scale`): the points are made in DuckDB from a seeded random
 * sequence and streamed to the file in id order, never held whole.
 */
export async function writeSyntheticPointsInDuckDb(path: string, rows: number, seed = 0.3): Promise<void> {
  // Sorting by id spills (about 15 GB for 100M points): beside the file, not in the working folder.
  const spill = `${path}.spill`;
  const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '1GB', temp_directory: spill });
  const connection = await instance.connect();
  try {
    await connection.run(`SELECT setseed(${seed})`);
    await connection.run(`CREATE VIEW points AS
      SELECT id, category, score, x, y, ('POINT (' || x || ' ' || y || ')')::GEOMETRY AS geometry
      FROM (SELECT range AS id, floor(random() * 50)::INTEGER AS category, random() * 1000 AS score, random() * 360 - 180 AS x, random() * 170 - 85 AS y FROM range(${rows}))`);
    await copyPoints(connection, 'points', 'id', path);
  } finally {
    connection.closeSync();
    instance.closeSync();
    rmSync(spill, { recursive: true, force: true });
  }
}

/**
 * The cached file of `points` synthetic points for the benches of large files (`twin-scale`, `enrich-scale`),
 * made first if missing, in bench/.work/scale-files (named by size and generator version).
 */
export async function cachedPointsFile(repo: string, points: number): Promise<string> {
  const folder = join(repo, 'bench', '.work', 'scale-files');
  const path = join(folder, `points-${points}-v1.parquet`);
  if (!existsSync(path)) {
    mkdirSync(folder, { recursive: true });
    await writeSyntheticPointsInDuckDb(`${path}.partial`, points);
    renameSync(`${path}.partial`, path);
  }
  return path;
}

function sqlList(values: string[]): string {
  return `[${values.map((value) => `'${value}'`).join(', ')}]`;
}
