import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { buildCatalog } from '../generator/build.ts';
import { createServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';
import { DuckDBInstance } from '@duckdb/node-api';
import { benchConfig, median } from './build-bench.ts';
import { writePointsCatalog } from './query-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

const ROUNDS = 15;
const DOWNLOAD_ROUNDS = 3;
const PORT = 39_873;
const ARROW = 'application/vnd.apache.arrow.stream';

/**
 * Median milliseconds of each run over `rounds` rounds, after one untimed run of each. The runs alternate within a
 * round, so that a machine busy with other work slows them alike.
 */
async function timeInTurn(rounds: number, runs: (() => Promise<unknown>)[]): Promise<number[]> {
  for (const run of runs) await run();
  const times = runs.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    for (const [index, run] of runs.entries()) {
      const started = performance.now();
      await run();
      times[index]!.push(performance.now() - started);
    }
  }
  return times.map(median);
}

/**
 * Query pages as JSON against the same pages as Arrow IPC streams, and whole-result downloads in each format,
 * on 1,000,000 points over HTTP (h3 server on a socket, the query worker pool, a fresh sandbox per request):
 * bytes on the wire and p50 time, the client reading the body (JSON.parse, or apache-arrow's tableFromIPC).
 */
export async function benchArrow(bench: BenchContext): Promise<void> {
  bench.section(`Arrow pages and downloads on 1,000,000 points: p50 of ${ROUNDS} requests over HTTP (downloads: ${DOWNLOAD_ROUNDS})`);
  const dataDir = join(bench.root, 'arrow-data');
  await mkdir(dataDir, { recursive: true });
  await writeSyntheticPoints(join(dataDir, 'points-1m.parquet'), 1_000_000);
  const catalogDir = join(bench.root, 'arrow-catalog');
  await writePointsCatalog(catalogDir, bench.repo, [{ slug: 'points', path: 'points-1m.parquet' }]);
  const config = { ...benchConfig(bench.root, catalogDir, dataDir, 'arrow-dist'), queryKeys: 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE', queryTimeoutMs: 60_000 };
  await buildCatalog({ config });
  const geoshelf = createServer({ config });
  const server = await listen(geoshelf, { port: PORT, hostname: '127.0.0.1' });
  const origin = `http://127.0.0.1:${PORT}`;
  const ids = geoshelf.snapshot().context.index.collections.get('bench')!.collection.datasets[0]!;
  const source = { alias: 'points', collection_id: ids.collection_id, dataset_id: ids.id, file_id: ids.files[0]!.id, file_source_id: ids.files[0]!.formats[0]!.sources[0]!.id };
  const post = (sql: string, limit: number, accept: string) => fetch(`${origin}/api/queries`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify({ sources: [source], sql, limit }),
  });

  try {
    for (const limit of [100, 1000]) {
      const sql = 'SELECT * FROM points';
      let jsonBytes = 0;
      let arrowBytes = 0;
      const [json = 0, arrow = 0] = await timeInTurn(ROUNDS, [
        async () => {
          const text = await (await post(sql, limit, 'application/json')).text();
          jsonBytes = Buffer.byteLength(text);
          if ((JSON.parse(text) as { rows: unknown[] }).rows.length !== limit) throw new Error('short JSON page');
        },
        async () => {
          const bytes = new Uint8Array(await (await post(sql, limit, ARROW)).arrayBuffer());
          arrowBytes = bytes.byteLength;
          if (tableFromIPC(bytes).numRows !== limit) throw new Error('short Arrow page');
        },
      ]);
      bench.report(`first page of SELECT *, ${limit} rows, JSON`, `${json.toFixed(1)} ms`, `${(jsonBytes / 1024).toFixed(1)} KiB`);
      bench.report(`first page of SELECT *, ${limit} rows, Arrow`, `${arrow.toFixed(1)} ms`, `${(arrowBytes / 1024).toFixed(1)} KiB: ${(arrowBytes / jsonBytes).toFixed(2)}× the bytes, ${(arrow / json).toFixed(2)}× the time of JSON`);
    }

    const query = await (await post('SELECT * FROM points LIMIT 100000', 1, 'application/json')).json() as { query_id: string; query_token: string };
    // Plain in-process DuckDB writing the same rows with COPY: Parquet as it is, CSV with geometries as WKT.
    const plain = await (await DuckDBInstance.create(':memory:', { threads: String(config.queryThreads) })).connect();
    const copy = (options: string, geometry: string) => () => plain.run(
      `COPY (SELECT * REPLACE (${geometry} AS geometry) FROM read_parquet('${join(dataDir, 'points-1m.parquet')}') LIMIT 100000) TO '${join(dataDir, 'copy.out')}' (${options})`,
    );
    const baselines: Record<string, (() => Promise<unknown>) | undefined> = { parquet: copy('FORMAT parquet', 'geometry'), csv: copy('FORMAT csv, HEADER', 'st_astext(geometry)') };
    for (const format of ['parquet', 'geojson', 'csv']) {
      let bytes = 0;
      const download = async () => {
        const response = await fetch(`${origin}/api/queries/${query.query_id}/download.${format}?token=${encodeURIComponent(query.query_token)}`);
        if (response.headers.get('x-geoshelf-row-count') !== '100000') throw new Error(`${format}: ${response.status}`);
        bytes = (await response.arrayBuffer()).byteLength;
      };
      const baseline = baselines[format];
      const [ms = 0, plainMs] = await timeInTurn(DOWNLOAD_ROUNDS, baseline ? [download, baseline] : [download]);
      const against = plainMs === undefined ? 'DuckDB has no GeoJSON writer without the spatial extension' : `plain DuckDB COPY ${plainMs.toFixed(0)} ms, ${(ms / plainMs).toFixed(1)}×`;
      bench.report(`download of 100,000 rows, ${format}`, `${ms.toFixed(0)} ms`, `${(bytes / 2 ** 20).toFixed(1)} MiB; ${against}`);
    }
    plain.closeSync();
  } finally {
    await server.close(true);
    await geoshelf.close();
  }
}
