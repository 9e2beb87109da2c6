/**
 * `npm run bench -- remote`: issue 25's figure for the build's reading of a remote GeoParquet file. A 1M-point
 * file in s3rver (a real S3 API, with the real SDK) is read from its footer (`inspect-remote.ts`: one HEAD and
 * two range requests), against the local inspection of the same file (every row: column statistics, validity
 * by GEOS, the extent) in the same run.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import type { StorageLocationModel } from '../core/model.ts';
import { inspectGeoParquet } from '../generator/enrich/inspect-data-file.ts';
import { inspectRemoteGeoParquet } from '../generator/enrich/inspect-remote.ts';
import { openRemoteObject } from '../runtime/remote-object.ts';
import { startBucket } from '../tests/helpers/bucket.ts';
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
  } finally {
    instance.closeSync();
    await bucket.stop();
  }
}
