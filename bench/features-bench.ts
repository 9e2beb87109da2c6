import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { PMTiles } from 'pmtiles';
import { PmTilesFileSource } from '../runtime/pmtiles-file-source.ts';
import { buildCatalog } from '../generator/build.ts';
import { createServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';
import { benchConfig } from './build-bench.ts';
import { timeIt, writePointsCatalog } from './query-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

const ROUNDS = 21;
const PORT = 39_871;
const COLLECTION = 'bench.points.points';
/** A 10° box in Europe: about 2,900 of the million points, so a page of 100 is a small part of the match. */
const BBOX = [0, 40, 10, 50] as const;

/** A one-file catalog over the synthetic 1M-point GeoParquet file, its links pointing at the bench port. */
async function buildPointsCatalog(bench: BenchContext, dataDir: string) {
  const catalogDir = join(bench.root, 'features-catalog');
  await writePointsCatalog(catalogDir, bench.repo, [{ slug: 'points', path: 'points-1m.parquet' }]);
  const config = { ...benchConfig(bench.root, catalogDir, dataDir, 'features-dist'), baseUrl: `http://127.0.0.1:${PORT}`, queryKeys: 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE', queryTimeoutMs: 30_000 };
  await buildCatalog({ config });
  return config;
}

/**
 * OGC API - Features on 1,000,000 points over HTTP (h3 server on a socket, the query worker pool, the file's
 * sandbox kept by the worker between reads): a bbox page of 100 against plain in-process DuckDB running the same filter, and
 * page 1,000 of the whole collection (its after cursor, as next links write it) against page 1.
 */
export async function benchFeatures(bench: BenchContext): Promise<void> {
  bench.section(`OGC API - Features on 1,000,000 points: p50 of ${ROUNDS} requests over HTTP`);
  const dataDir = join(bench.root, 'features-data');
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, 'points-1m.parquet');
  await writeSyntheticPoints(path, 1_000_000);
  const config = await buildPointsCatalog(bench, dataDir);
  const geoshelf = createServer({ config });
  const server = await listen(geoshelf, { port: PORT, hostname: '127.0.0.1' });
  const items = `${config.baseUrl}/features/collections/${COLLECTION}/items`;
  const getJson = async (url: string) => (await fetch(url)).json() as Promise<{ features: unknown[]; links: { rel: string; href: string }[] }>;

  const plain = await DuckDBInstance.create(':memory:', { threads: String(config.queryThreads) });
  const connection = await plain.connect();
  const [west, south, east, north] = BBOX;
  const plainBbox = () => connection.runAndReadAll(`SELECT file_row_number, * EXCLUDE (bbox) FROM read_parquet('${path}', file_row_number = true) WHERE bbox.xmax >= ${west} AND bbox.xmin <= ${east} AND bbox.ymax >= ${south} AND bbox.ymin <= ${north} LIMIT 101`).then((reader) => reader.getRows());
  const bboxUrl = `${items}?limit=100&bbox=${BBOX.join(',')}`;
  const served = await timeIt(ROUNDS, () => getJson(bboxUrl));
  const baseline = await timeIt(ROUNDS, plainBbox);
  const target = 1.5 * baseline + 10;
  bench.report('items?limit=100&bbox (one page)', `${served.toFixed(1)} ms`, `plain DuckDB ${baseline.toFixed(1)} ms; ${(served / baseline).toFixed(2)}×, target ≤ 1.5× + 10 ms = ${target.toFixed(1)} ms: ${served <= target ? 'met' : 'missed'}`);

  // CQL2 (issue 30): a spatial function on the same box, and on a polygon literal, against plain DuckDB with the
  // box's WHERE clause, which for points selects the same rows; GEOS tests each row the covering lets through.
  const cql2Target = (ms: number) => 1.3 * ms + 8;
  for (const [label, filter] of [
    ['S_INTERSECTS(geometry, BBOX(0, 40, 10, 50))', `S_INTERSECTS(geometry, BBOX(${BBOX.join(', ')}))`],
    ['S_WITHIN(geometry, POLYGON((0 40, 10 40, 10 50, 0 50, 0 40)))', `S_WITHIN(geometry, POLYGON((${west} ${south}, ${east} ${south}, ${east} ${north}, ${west} ${north}, ${west} ${south})))`],
  ] as const) {
    const cqlUrl = `${items}?limit=100&filter=${encodeURIComponent(filter)}`;
    if ((await getJson(cqlUrl)).features.length !== 100) throw new Error(`${label} did not fill a page of 100`);
    const cql = await timeIt(ROUNDS, () => getJson(cqlUrl));
    const plainCql = await timeIt(ROUNDS, plainBbox);
    bench.report(`items?limit=100&filter=${label}`, `${cql.toFixed(1)} ms`, `plain DuckDB with the box's WHERE ${plainCql.toFixed(1)} ms; ${(cql / plainCql).toFixed(2)}×, target ≤ 1.3× + 8 ms = ${cql2Target(plainCql).toFixed(1)} ms: ${cql <= cql2Target(plainCql) ? 'met' : 'missed'}`);
  }

  // Next links grow the page (up to 1,000 rows), so row 99,900 is reached in about 100 of them.
  const walkStarted = performance.now();
  let url = `${items}?limit=100`;
  let pages = 0;
  while (Number(new URL(url).searchParams.get('after') ?? -1) < 99_899) {
    url = (await getJson(url)).links.find((link) => link.rel === 'next')!.href;
    pages++;
  }
  const walkMs = performance.now() - walkStarted;
  const first = await timeIt(ROUNDS, () => getJson(`${items}?limit=100`));
  // Page 1,000 at 100 a page: the after cursor that next links write, 99,900 rows in.
  const deep = await timeIt(ROUNDS, () => getJson(`${items}?limit=100&after=99899`));
  bench.report('items?limit=100, page 1', `${first.toFixed(1)} ms`, 'rows 0–99');
  bench.report('items?limit=100&after=99899 (page 1,000)', `${deep.toFixed(1)} ms`, `rows 99,900–99,999; ${(deep / first).toFixed(2)}× page 1, target ≤ 2×: ${deep <= 2 * first ? 'met' : 'missed'}; following ${pages} next links (pages growing to 1,000) to row 99,900 took ${(walkMs / 1000).toFixed(1)} s`);

  // OGC API - Tiles (issue 30): a tile of the twin over HTTP against the same tile read from the archive in process.
  const archive = new PMTiles(new PmTilesFileSource(join(dataDir, 'points-1m.pmtiles')));
  const header = await archive.getHeader();
  const z = Math.min(header.maxZoom, 6);
  // The tile of Paris at that level: [x, y] of WebMercatorQuad.
  const [x, y] = [Math.floor(((2.35 + 180) / 360) * 2 ** z), Math.floor(((1 - Math.log(Math.tan((48.85 * Math.PI) / 180) + 1 / Math.cos((48.85 * Math.PI) / 180)) / Math.PI) / 2) * 2 ** z)];
  const tileUrl = `${config.baseUrl}/features/collections/${COLLECTION}/tiles/WebMercatorQuad/${z}/${y}/${x}`;
  const tileBytes = (await (await fetch(tileUrl)).arrayBuffer()).byteLength;
  const overHttp = await timeIt(ROUNDS, async () => (await fetch(tileUrl)).arrayBuffer());
  const direct = await timeIt(ROUNDS, () => new PMTiles(new PmTilesFileSource(join(dataDir, 'points-1m.pmtiles'))).getZxy(z, x, y));
  const cached = await timeIt(ROUNDS, () => archive.getZxy(z, x, y));
  bench.report(`OGC Tiles tile ${z}/${y}/${x} of the twin (${(tileBytes / 1024).toFixed(0)} KB)`, `${overHttp.toFixed(1)} ms`, `direct range read of the archive in process: ${direct.toFixed(1)} ms opened each time, ${cached.toFixed(1)} ms with its directories cached; ${(overHttp / direct).toFixed(2)}× the first`);

  connection.closeSync();
  plain.closeSync();
  await server.close(true);
  await geoshelf.close();
}
