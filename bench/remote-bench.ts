/**
 * `npm run bench -- remote`: issue 25's figure for the build's reading of a remote GeoParquet file. A 1M-point
 * file in s3rver (a real S3 API, with the real SDK) is read from its footer (`inspect-remote.ts`: one HEAD and
 * two range requests), against the local inspection of the same file (every row: column statistics, validity
 * by GEOS, the extent) in the same run. Then the first page of a query over the same file, from the bucket (a
 * cold copy, then warm) against the data folder, through the whole service in one process. Last, the whole
 * sample's enrichment from a bucket against its data folder.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import type { StorageLocationModel } from '../core/model.ts';
import { inspectGeoParquet } from '../generator/enrich/inspect-data-file.ts';
import { inspectRemoteGeoParquet } from '../generator/enrich/inspect-remote.ts';
import { openRemoteObject } from '../runtime/remote-object.ts';
import { publishData } from '../deploy/publish-data.ts';
import { buildCatalog, loadCatalogModel } from '../generator/build.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { startBucket, type TestBucket } from '../tests/helpers/bucket.ts';
import { makeTempCatalog, makeTestConfig, ROOT } from '../tests/helpers/catalog.ts';
import { sampleInBucket } from '../tests/helpers/remote.ts';
import { sourceRef, TEST_KEYS } from '../tests/helpers/queries.ts';
import { median } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

const ROUNDS = 3;
const ROWS = 1_000_000;

export async function benchRemoteSources(bench: BenchContext): Promise<void> {
  bench.section('Remote GeoParquet: the build reads the footer of a file in object storage (issue 25)');
  const path = join(bench.root, 'remote-points.parquet');
  await writeSyntheticPoints(path, ROWS);
  const size = (await stat(path)).size;
  const bucket = await startBucket('remote-bench');
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  try {
    await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: 'points.parquet', Body: await readFile(path) }));
    const location: StorageLocationModel = {
      id: 1, slug: 'bench', name: 'bench', backend_type: 's3',
      config: { version: '1', base_url: 'https://data.example.org', bucket: bucket.bucket, endpoint_url: bucket.endpoint },
    } as StorageLocationModel;
    const env = { ...process.env, ...bucket.env };
    const remote: { ms: number; bytes: number; rows: number }[] = [];
    const local: { ms: number; rows: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // A new object each round, so no client state carries over; the sides alternate, a random one first.
      const sides = [
        async () => {
          const object = openRemoteObject(location, 'points.parquet', env);
          const started = performance.now();
          const facts = await inspectRemoteGeoParquet(instance, object, join(bench.root, 'remote-scratch'));
          remote.push({ ms: performance.now() - started, bytes: facts.bytesRead, rows: facts.rows });
        },
        async () => {
          const started = performance.now();
          const facts = await inspectGeoParquet(instance, path);
          local.push({ ms: performance.now() - started, rows: facts.rows });
        },
      ];
      for (const side of Math.random() < 0.5 ? sides : sides.reverse()) await side();
    }
    const share = remote.map((run) => run.bytes / size);
    const met = share.every((value) => value <= 0.02) && remote.every((run) => run.rows === ROWS) && local.every((run) => run.rows === ROWS);
    bench.report(
      `footer of a ${ROWS.toLocaleString('en-US')}-point file in s3rver: bytes read / file size`,
      share.map((value) => `${(value * 100).toFixed(3)}%`).join(', '),
      `${remote[0]!.bytes.toLocaleString('en-US')} of ${size.toLocaleString('en-US')} bytes (HEAD + the last 8 bytes + the footer), ${ROUNDS} rounds; target ≤ 2% in every round: ${met ? 'met' : 'missed'}`,
    );
    bench.report(
      'footer read (remote) / local inspection of the same file, time',
      `${median(remote.map((run) => run.ms)).toFixed(0)} ms / ${median(local.map((run) => run.ms)).toFixed(0)} ms`,
      `medians of ${ROUNDS}; remote per round ${remote.map((run) => run.ms.toFixed(0)).join(', ')} ms, local ${local.map((run) => run.ms.toFixed(0)).join(', ')} ms. The local side reads every row (statistics, GEOS validity, extent); the remote side reads no row`,
    );
    await compareQueries(bench, bucket, path, env);
  } finally {
    instance.closeSync();
    await bucket.stop();
  }
  await compareSampleBuilds(bench);
}

/**
 * The whole sample's enrichment with its data in a bucket (put there by `npm run publish -- --data`; every file
 * read whole once, `GEOSHELF_REMOTE_SCAN=full`) against the same with its data folder, each from empty caches,
 * then again with nothing changed. Twins are current on both sides (the local build makes them in the data
 * folder first), so neither side tiles.
 */
async function compareSampleBuilds(bench: BenchContext): Promise<void> {
  const bucket = await startBucket('sample-data');
  const saved = { ...process.env };
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: bucket.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: bucket.env.AWS_SECRET_ACCESS_KEY, AWS_REGION: bucket.env.AWS_REGION });
  try {
    const local = await makeTestConfig();
    await loadCatalogModel({ config: local });
    await publishData({ dataDir: local.dataDir, target: 's3://sample-data', cacheMaxAge: 60, env: bucket.env, log: () => undefined });
    const rounds: { cold: Record<'local' | 'remote', number>; warm: Record<'local' | 'remote', number> }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const configs = { local: { ...local, cacheDir: await mkdtemp(join(bench.root, 'sample-cache-')) }, remote: await sampleInBucket(bucket, local, 'sample-data') };
      const times = { cold: { local: 0, remote: 0 }, warm: { local: 0, remote: 0 } };
      for (const kind of ['cold', 'warm'] as const) {
        for (const side of Math.random() < 0.5 ? (['local', 'remote'] as const) : (['remote', 'local'] as const)) {
          const started = performance.now();
          await loadCatalogModel({ config: configs[side] });
          times[kind][side] = performance.now() - started;
        }
      }
      rounds.push(times);
    }
    const format = (kind: 'cold' | 'warm') => rounds.map((times) => `${(times[kind].remote / times[kind].local).toFixed(2)}× (${(times[kind].remote / 1000).toFixed(1)} / ${(times[kind].local / 1000).toFixed(1)} s)`).join('; ');
    bench.report('the sample\'s enrichment, data in s3rver / data folder, empty caches', format('cold'), `${ROUNDS} rounds, sides alternated; every file read whole once (68.7 MB, six formats), the same metadata as the local build (tests/remote-sample.test.ts)`);
    bench.report('the same with nothing changed', format('warm'), 'the remote side asks one HEAD per object (a LIST per shapefile and File Geodatabase) and reads nothing');
  } finally {
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    await bucket.stop();
  }
}

/** Timed runs of each side per round, alternated, a random side first each time. */
const RUNS = 51;

/**
 * The first page of `SELECT *` over the 1M points: from the bucket's copy against the local file, p50 of each
 * round (target: warm ≤ 1.1 × local in every round), and the first query of a cold copy in a new server.
 */
async function compareQueries(bench: BenchContext, bucket: TestBucket, path: string, env: NodeJS.ProcessEnv): Promise<void> {
  const source = (slug: string, location?: string) => [`  - slug: ${slug}`, `    name: ${slug}`, '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1', `            storage_location: ${location ?? 'sample-data'}`, '            path: points.parquet'];
  const { config } = await makeTempCatalog({
    'formats.yaml': '- slug: geoparquet\n  format_type: geoparquet\n  name: GeoParquet\n  mime_type: application/vnd.apache.parquet\n',
    'storage-locations.yaml': `${await readFile(join(ROOT, 'catalog-data/storage-locations.yaml'), 'utf8')}\n- slug: bucket\n  name: Bucket\n  backend_type: s3\n  base_url: https://data.example.org\n  bucket: ${bucket.bucket}\n  endpoint_url: ${bucket.endpoint}\n`,
    'datasets/points.yaml': ['slug: points', 'collection: maps', 'name: Points', 'files:', ...source('local'), ...source('remote', 'bucket'), ''].join('\n'),
  }, { 'points.parquet': path });
  const saved = { ...process.env };
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY, AWS_REGION: env.AWS_REGION });
  const cacheDir = await mkdtemp(join(bench.root, 'remote-copies-'));
  try {
    await buildCatalog({ config });
    const serve = () => createServer({ config: { ...config, queryKeys: TEST_KEYS, remoteCacheDir: cacheDir, queryTimeoutMs: 120_000 } });
    const firstPage = async (server: GeoshelfServer, file: string) => {
      const started = performance.now();
      const response = await server.fetch(new Request('http://localhost/api/queries', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sql: 'SELECT * FROM p', sources: [sourceRef(server, 'p', 'maps', 'points', file)], limit: 100 }),
      }));
      const body = await response.json() as { rows?: unknown[] };
      if (response.status !== 200 || body.rows?.length !== 100) throw new Error(`the ${file} query answered ${response.status}: ${JSON.stringify(body).slice(0, 200)}`);
      return performance.now() - started;
    };
    const cold: number[] = [];
    const verdicts: string[] = [];
    let met = true;
    for (let round = 0; round < ROUNDS; round++) {
      const server = serve();
      try {
        await firstPage(server, 'local');
        cold.push(await firstPage(server, 'remote'));
        const times = { local: [] as number[], remote: [] as number[] };
        for (let run = 0; run < RUNS; run++) {
          for (const side of Math.random() < 0.5 ? (['local', 'remote'] as const) : (['remote', 'local'] as const)) times[side].push(await firstPage(server, side));
        }
        const [local, remote] = [median(times.local), median(times.remote)];
        met &&= remote <= 1.1 * local;
        verdicts.push(`${(remote / local).toFixed(2)}× (${remote.toFixed(1)} / ${local.toFixed(1)} ms)`);
      } finally {
        await server.close();
      }
    }
    bench.report('first page of SELECT * (limit 100), remote copy warm / local file, p50', verdicts.join('; '), `${RUNS} runs of each side per round, alternated; target ≤ 1.1× in every round: ${met ? 'met' : 'missed'}`);
    bench.report('first query of a cold remote file (fetches its 52.8 MB copy from s3rver)', cold.map((ms) => `${ms.toFixed(0)} ms`).join(', '), `a new server each round; the warm p50 above is the same query once the copy is there`);
  } finally {
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    await rm(cacheDir, { recursive: true, force: true });
  }
}
