import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { encodeTile, tileBounds } from '../core/geo/mvt.ts';
import { buildCatalog } from '../generator/build.ts';
import { createQueryService } from '../query/service.ts';
import { loadSnapshot } from '../server/catalog.ts';
import { benchConfig, median } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

const ROUNDS = 21;
/**
 * Idle time before each timed query, as for a query reaching an idle server (`timePair`): long enough that the
 * worker has made its next instances (10 ms each) and both sides start from the same idle machine. With 25 ms,
 * plain DuckDB started on processors still warm from the worker's work and the service on idle ones.
 */
const SETTLE_MS = 100;

/** Median milliseconds of `rounds` runs, after one untimed run. */
export async function timeIt(rounds: number, run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return median(times);
}

/**
 * Medians of two ways of doing the same work, `rounds` runs each, alternated run by run after one untimed run
 * of each, so that a slow spell of a shared machine falls on both sides of the ratio. With `settleMs`, each
 * run starts that long after the one before ended, as a request reaching an idle server does: what either side
 * leaves to do in the background (a query worker makes the next instance once it has answered) then never
 * lands on the other side's run.
 */
export async function timePair(rounds: number, first: () => Promise<unknown>, second: () => Promise<unknown>, settleMs = 0): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  await first();
  await second();
  for (let round = 0; round < rounds; round++) {
    for (const [side, run] of [first, second].entries()) {
      if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
      const started = performance.now();
      await run();
      times[side]!.push(performance.now() - started);
    }
  }
  return [median(times[0]), median(times[1])];
}

/**
 * Records of a one-dataset catalog (collection `bench`, dataset `points`) whose files are GeoParquet files of the
 * bench's data folder, with the sample's formats and storage locations. Every bench over the 1M-point file uses it.
 */
export async function writePointsCatalog(catalogDir: string, repo: string, files: { slug: string; path: string }[]): Promise<void> {
  await mkdir(join(catalogDir, 'collections'), { recursive: true });
  await mkdir(join(catalogDir, 'datasets'), { recursive: true });
  for (const name of ['formats.yaml', 'storage-locations.yaml']) await writeFile(join(catalogDir, name), await readFile(join(repo, 'catalog-data', name), 'utf8'));
  await writeFile(join(catalogDir, 'collections/bench.yaml'), 'slug: bench\nname: Bench\n');
  const file = ({ slug, path }: { slug: string; path: string }) => [
    `  - slug: ${slug}`, `    name: ${slug}`, '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1', `            path: ${path}`,
  ];
  await writeFile(join(catalogDir, 'datasets/points.yaml'), ['slug: points', 'collection: bench', 'name: One million points', 'files:', ...files.flatMap(file), ''].join('\n'));
}

/** A one-dataset catalog over the synthetic 1M-point file, built into the bench folder. */
async function buildPointsCatalog(root: string, repo: string, dataDir: string) {
  const catalogDir = join(root, 'points-catalog');
  await writePointsCatalog(catalogDir, repo, [{ slug: 'points', path: 'points-1m.parquet' }, { slug: 'points-random', path: 'points-1m-random.parquet' }]);
  const config = { ...benchConfig(root, catalogDir, dataDir, 'points-dist'), queryKeys: 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE', queryTimeoutMs: 30_000 };
  await buildCatalog({ config });
  return config;
}

/**
 * p50 of each query kind on 1,000,000 points through the query service API (request parsing, allowlist, token,
 * worker process, fresh sandboxed DuckDB), beside the same work done by plain in-process DuckDB, in the same run.
 */
export async function benchQueries(bench: BenchContext): Promise<void> {
  bench.section(`Queries on 1,000,000 points: p50 of ${ROUNDS} runs each, alternated, each ${SETTLE_MS} ms after the last, service against plain in-process DuckDB`);
  const dataDir = join(bench.root, 'points-data');
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, 'points-1m.parquet');
  await writeSyntheticPoints(path, 1_000_000);
  await writeSyntheticPoints(join(dataDir, 'points-1m-random.parquet'), 1_000_000, { spatialOrder: false });
  const config = await buildPointsCatalog(bench.root, bench.repo, dataDir);
  const { context } = loadSnapshot(config.distDir, { budgetBytes: 1 << 20, cacheMaxAge: 0 });
  // No tile cache: each round must make its tile, as a first request does.
  const service = createQueryService({ config: { ...config, tileCacheMb: 0 }, catalog: () => ({ index: context.index, baseUrl: config.baseUrl, buildId: 'bench' }) });
  const ids = context.index.collections.get('bench')!.collection.datasets[0]!;
  const sourceOf = (index: number) => ({ alias: 'points', collection_id: ids.collection_id, dataset_id: ids.id, file_id: ids.files[index]!.id, file_source_id: ids.files[index]!.formats[0]!.sources[0]!.id });
  const source = sourceOf(0);
  const plain = await DuckDBInstance.create(':memory:', { threads: String(config.queryThreads) });
  const connection = await plain.connect();
  await connection.run(`CREATE VIEW points AS SELECT * FROM read_parquet('${path}')`);
  const plainPage = (sql: string, offset = 0, limit = 100) => connection.runAndReadAll(`SELECT * FROM (${sql}) LIMIT ${limit + 1} OFFSET ${offset}`).then((reader) => reader.getRows());

  const cases: [string, () => Promise<unknown>, () => Promise<unknown>][] = [];
  const firstPage = 'SELECT * FROM points';
  cases.push(['first page of SELECT * (limit 100)', () => service.run({ sources: [source], sql: firstPage, limit: 100 }), () => plainPage(firstPage)]);
  const filtered = "SELECT id, score, colour, zone FROM points WHERE score > 900 AND colour = 'red' ORDER BY score DESC";
  cases.push(['filter with ORDER BY', () => service.run({ sources: [source], sql: filtered, limit: 100 }), () => plainPage(filtered)]);
  const grouped = 'SELECT colour, zone, count(*) AS n, avg(score) AS mean FROM points GROUP BY colour, zone ORDER BY colour, zone';
  cases.push(['GROUP BY aggregate', () => service.run({ sources: [source], sql: grouped, limit: 100 }), () => plainPage(grouped)]);
  const ordered = await service.run({ sources: [source], sql: 'SELECT id, score FROM points ORDER BY id', limit: 100 });
  cases.push(['deep page (offset 500,000)', () => service.page(ordered.query_id, ordered.query_token, { offset: 500_000, page_size: 100 }), () => plainPage('SELECT id, score FROM points ORDER BY id', 500_000)]);
  const all = await service.run({ sources: [source], sql: 'SELECT * FROM points', limit: 1 });
  cases.push(['bounds of the whole result', () => service.bounds(all.query_id, all.query_token), () => connection.runAndReadAll('SELECT min(bbox.xmin), min(bbox.ymin), max(bbox.xmax), max(bbox.ymax) FROM points')]);
  await connection.run(`CREATE VIEW points_random AS SELECT * FROM read_parquet('${join(dataDir, 'points-1m-random.parquet')}')`);
  for (const [label, view, index, z, x, y] of [['', 'points', 0, 4, 8, 5], ['', 'points', 0, 12, 2100, 1400], [', rows in random order', 'points_random', 1, 4, 8, 5]] as const) {
    const plainTile = async () => {
      const [w, s, e, n] = tileBounds(z, x, y, 64);
      const rows = (await connection.runAndReadAll(`SELECT st_asbinary(geometry), id, colour FROM ${view} WHERE bbox.xmax >= ${w} AND bbox.xmin <= ${e} AND bbox.ymax >= ${s} AND bbox.ymin <= ${n} LIMIT ${config.tileMaxFeatures + 1}`)).getRows();
      return encodeTile(rows.map((row) => ({ wkb: (row[0] as { bytes: Uint8Array }).bytes, properties: { id: Number(row[1]), colour: String(row[2]) } })), z, x, y, { layerName: 'result', maxFeatures: config.tileMaxFeatures });
    };
    const tileQuery = await service.run({ sources: [sourceOf(index)], sql: 'SELECT id, colour, geometry, bbox FROM points', limit: 1 });
    cases.push([`one tile at z=${z}${label}`, () => service.tile(tileQuery.query_id, tileQuery.query_token, { z, x, y }), plainTile]);
  }
  for (const [name, run, baseline] of cases) {
    const [serviceMs, plainMs] = await timePair(ROUNDS, run, baseline, SETTLE_MS);
    // Issue 13's target for the service: at most 1.3 times plain DuckDB plus 8 ms.
    const target = plainMs * 1.3 + 8;
    bench.report(name, `${serviceMs.toFixed(1)} ms`, `plain DuckDB ${plainMs.toFixed(1)} ms, ${(serviceMs / plainMs).toFixed(2)}×, +${(serviceMs - plainMs).toFixed(1)} ms; target ${target.toFixed(1)} ms ${serviceMs <= target ? 'met' : 'missed'}`);
  }
  // A paging client that asks for the next page the moment it has one leaves the worker no time between two
  // queries: each then also waits for the rest of its instance's making (10 ms of processor time).
  const [pagedMs, plainPagedMs] = [await timeIt(ROUNDS, cases[0]![1]), await timeIt(ROUNDS, cases[0]![2])];
  bench.report('first page, asked back to back', `${pagedMs.toFixed(1)} ms`, `plain DuckDB ${plainPagedMs.toFixed(1)} ms, ${(pagedMs / plainPagedMs).toFixed(2)}×, +${(pagedMs - plainPagedMs).toFixed(1)} ms; not alternated`);
  connection.closeSync();
  plain.closeSync();
  await service.close();
}
