import { createServer as createHttpServer, type Server } from 'node:http';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import type { Config } from '../runtime/config.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { startBucket, type TestBucket } from './helpers/bucket.ts';
import { getWithToken, post, sourceRef, TEST_KEYS } from './helpers/queries.ts';
import { BUCKET, CAPITALS, CITIES, fileRecord, remoteCatalog, useBucketCredentials } from './helpers/remote.ts';

/** The first page of a query over one source, its token and id. */
async function firstPage(server: GeoshelfServer, file: string, sql: string) {
  const response = await post(server, '/api/queries', { sql, sources: [sourceRef(server, 'places', 'maps', 'places', file)], limit: 50 });
  return { response, body: await response.json() as { query_id: string; query_token: string; rows: Record<string, unknown>[]; code?: string; message?: string } };
}

describe('queries over sources in object storage, read from the bucket through a local copy', () => {
  let bucket: TestBucket;
  let restore = () => undefined as void;
  let config: Config;
  let server: GeoshelfServer;
  let cacheDir = '';
  const warnings: string[] = [];

  let gated: { server: Server; origin: string; release: () => void };
  beforeAll(async () => {
    gated = await startGatedServer(await readFile(CITIES));
    bucket = await startBucket(BUCKET);
    restore = useBucketCredentials(bucket);
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CITIES) }));
    ({ config } = await remoteCatalog(bucket, [
      fileRecord('local', undefined, 'places/cities.parquet'), fileRecord('s3', 'bucket-data', 'places/cities.parquet'),
      fileRecord('http', 'bucket-http', 'places/cities.parquet'), fileRecord('missing', 'bucket-data', 'places/cities.parquet'),
      fileRecord('slow', 'other-http', 'cities.parquet'),
    ], { httpOrigin: gated.origin }));
    await buildCatalog({ config });
    cacheDir = await mkdtemp(join(tmpdir(), 'geoshelf-remote-copies-'));
    // Copies are checked against the store on every query, so a change shows at once.
    server = createServer({ config: { ...config, queryKeys: TEST_KEYS, remoteCacheDir: cacheDir, remoteRevalidateS: 0 }, warn: (message) => warnings.push(message) });
  });
  afterAll(async () => {
    gated?.release();
    gated?.server.close();
    await server?.close();
    restore();
    await bucket?.stop();
  });

  it('answers the same rows, bounds and tiles from the bucket, through S3 and over HTTP, as from the local file', async () => {
    const sql = 'SELECT city_id, name, population FROM places ORDER BY population DESC, city_id';
    const local = await firstPage(server, 'local', sql);
    expect(local.response.status).toBe(200);
    for (const file of ['s3', 'http']) {
      const remote = await firstPage(server, file, sql);
      expect(remote.response.status, JSON.stringify(remote.body)).toBe(200);
      expect(remote.body.rows).toEqual(local.body.rows);
      const later = await post(server, `/api/queries/${remote.body.query_id}/pages`, { offset: 50, page_size: 20 }, { 'x-service-query-token': remote.body.query_token });
      const localLater = await post(server, `/api/queries/${local.body.query_id}/pages`, { offset: 50, page_size: 20 }, { 'x-service-query-token': local.body.query_token });
      expect((await later.json() as { rows: unknown[] }).rows).toEqual((await localLater.json() as { rows: unknown[] }).rows);
    }
    const map = async (file: string) => {
      const { body } = await firstPage(server, file, 'SELECT * FROM places');
      const bounds = await (await getWithToken(server, `/api/queries/${body.query_id}/bounds`, body.query_token)).json();
      // Central Europe at z=5: thousands of places, under the tile cap, so the tile holds every one of them.
      const tile = await getWithToken(server, `/api/queries/${body.query_id}/tiles/5/16/10.mvt`, body.query_token);
      const layer = new VectorTile(new PbfReader(new Uint8Array(await tile.arrayBuffer()))).layers.result!;
      const ids = Array.from({ length: layer.length }, (_, index) => Number(layer.feature(index).properties.city_id)).sort((a, b) => a - b);
      return { bounds, ids };
    };
    const [localMap, remoteMap] = [await map('local'), await map('s3')];
    expect(remoteMap.bounds).toEqual(localMap.bounds);
    expect(remoteMap.ids.length).toBeGreaterThan(1000);
    expect(remoteMap.ids).toEqual(localMap.ids);
    // One copy per object address, fetched once however many queries read it.
    const [folder] = await readdir(cacheDir);
    expect(folder).toMatch(new RegExp(`^${process.pid}-`));
    const copies = await readdir(join(cacheDir, folder!));
    expect(copies.filter((name) => name.endsWith('.parquet'))).toHaveLength(2);
  });

  it('sees a file changed under the same key: old tokens answer query_outdated, new queries read the new rows', async () => {
    const before = await firstPage(server, 's3', 'SELECT count(*) AS n FROM places');
    expect(Number(before.body.rows[0]!.n)).toBeGreaterThan(100_000);
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CAPITALS) }));
    try {
      const page = await post(server, `/api/queries/${before.body.query_id}/pages`, { offset: 0, page_size: 1 }, { 'x-service-query-token': before.body.query_token });
      expect(page.status).toBe(422);
      expect((await page.json() as { code: string }).code).toBe('query_outdated');
      const after = await firstPage(server, 's3', 'SELECT count(*) AS n FROM places');
      expect(Number(after.body.rows[0]!.n)).toBeLessThan(1000);
    } finally {
      await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CITIES) }));
    }
  });

  it('answers 503 with Retry-After, naming no store, when the object cannot be read, and logs why', async () => {
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CITIES) }));
    // The built catalog names an object that is then deleted from the bucket.
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    await bucket.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet' }));
    try {
      const { response, body } = await firstPage(server, 'missing', 'SELECT count(*) AS n FROM places');
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(body.code).toBe('source_unavailable');
      expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|s3:\/\/|remote-data/);
      expect(warnings.some((warning) => /does not exist \(HTTP 404/.test(warning))).toBe(true);
    } finally {
      await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CITIES) }));
    }
  });

  it('answers a cold file\'s first query 503 with Retry-After while it arrives, and the file once it is here', async () => {
    // The server holds the body of a whole-file GET until released, so the query's deadline passes first.
    const short = createServer({ config: { ...config, queryKeys: TEST_KEYS, remoteCacheDir: cacheDir, queryTimeoutMs: 2000 } });
    try {
      await coldThenReady(short);
    } finally {
      await short.close();
    }
  });

  it('zips a remote source for download-zip from its copy, with the same ETag on every replica', async () => {
    const ref = sourceRef(server, 'p', 'maps', 'places', 's3');
    const path = `/api/collections/maps/datasets/places/files/s3/sources/${ref.file_source_id}/download-zip`;
    const response = await server.fetch(new Request(`http://localhost${path}`));
    expect(response.status).toBe(200);
    const zip = Buffer.from(await response.arrayBuffer());
    const bytes = await readFile(CITIES);
    // Entries are stored, not deflated: the file's bytes sit whole in the archive, after its name.
    const start = zip.indexOf(bytes.subarray(0, 256));
    expect(start).toBeGreaterThan(0);
    expect(zip.subarray(start, start + bytes.length).equals(bytes)).toBe(true);
    expect(zip.subarray(0, start).toString('latin1')).toContain('cities.parquet');
    const other = createServer({ config: { ...config, queryKeys: TEST_KEYS, remoteCacheDir: cacheDir } });
    try {
      const again = await other.fetch(new Request(`http://localhost${path}`, { method: 'HEAD' }));
      expect(again.headers.get('etag')).toBe(response.headers.get('etag'));
      expect(Number(again.headers.get('content-length'))).toBe(zip.length);
    } finally {
      await other.close();
    }
  });

  it('is ready while its stores answer, and not ready, naming the sources, once the bucket is gone (run last)', async () => {
    const up = await server.readiness.check();
    expect(up.status).toBe('ready');
    expect(up.sources.remote).toBe(4);
    await bucket.stop();
    const down = await server.readiness.check();
    expect(down.status).toBe('not_ready');
    // The bucket's sources, by S3 and over HTTP, and not the other HTTP server's, which still answers.
    expect(down.unreachable.map((source) => source.url).sort()).toEqual([
      `${bucket.endpoint}/${BUCKET}/places/cities.parquet`,
      `https://data.example.org/${BUCKET}/places/cities.parquet`,
      `https://data.example.org/${BUCKET}/places/cities.parquet`,
    ]);
    expect(JSON.stringify(down)).not.toContain(bucket.env.AWS_SECRET_ACCESS_KEY!);
  });

  async function coldThenReady(server: GeoshelfServer) {
    const cold = await firstPage(server, 'slow', 'SELECT count(*) AS n FROM places');
    expect(cold.response.status).toBe(503);
    expect(Number(cold.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(cold.body.message).toMatch(/being fetched/);
    gated.release();
    let answer = cold;
    for (let attempt = 0; attempt < 100 && answer.response.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await firstPage(server, 'slow', 'SELECT count(*) AS n FROM places');
    }
    expect(answer.response.status).toBe(200);
    expect(Number(answer.body.rows[0]!.n)).toBe(135_233);
  }
});

/**
 * An HTTP server with one file, `cities.parquet`: HEAD, range requests and the first whole-file GET (the build's
 * reads) are answered at once; a later whole-file GET (the query service's fetch) gets its headers, then its body
 * only after `release()`.
 */
async function startGatedServer(bytes: Buffer): Promise<{ server: Server; origin: string; release: () => void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let wholeReads = 0;
  const headers = { 'content-type': 'application/vnd.apache.parquet', etag: '"cities-1"', 'last-modified': 'Fri, 27 Nov 2026 00:00:00 GMT', 'accept-ranges': 'bytes' };
  const server = createHttpServer((request, response) => {
    if (request.url !== '/cities.parquet') return void response.writeHead(404).end();
    const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? '');
    if (range) {
      const [start, end] = [Number(range[1]), Math.min(Number(range[2]), bytes.length - 1)];
      response.writeHead(206, { ...headers, 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${bytes.length}` });
      return void response.end(bytes.subarray(start, end + 1));
    }
    response.writeHead(200, { ...headers, 'content-length': bytes.length });
    if (request.method === 'HEAD') return void response.end();
    // The first whole-file GET is the build's, which reads the file once; the later ones wait.
    if (wholeReads++ === 0) return void response.end(bytes);
    response.flushHeaders();
    void released.then(() => response.end(bytes));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, origin: `http://127.0.0.1:${port}`, release };
}
