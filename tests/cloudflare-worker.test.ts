import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import type { Server } from 'srvx';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';
import type { Manifest } from '../runtime/manifest.ts';
import { bundleWorker, fetchWorker, fillBucket, getBucket, sendRaw, type RawResponse } from './helpers/cloudflare-worker.ts';
import { sampleConfig, sampleManifest } from './helpers/sample.ts';
import { findFreePort } from './helpers/web-app.ts';

const PREFIX = 'site/v1/';
const PARQUET = 'geonames/cities/3.1.0/cities-1000.parquet';
const NOT_PREBUILT = '/api/collections/geonames?limit=3&offset=1';

describe('the Cloudflare Worker of docs/ in workerd, in front of an R2 bucket filled as publish fills one', () => {
  const config = sampleConfig();
  let manifest: Manifest;
  let geoshelf: GeoshelfServer;
  let origin: Server;
  let originUrl: string;
  let mf: Miniflare;
  let edge: URL;
  const seenByOrigin: string[] = [];

  beforeAll(async () => {
    manifest = sampleManifest();
    geoshelf = createServer({ config, serveData: true });
    const port = await findFreePort();
    originUrl = `http://127.0.0.1:${port}`;
    const record = (request: Request) => {
      const { pathname, search } = new URL(request.url);
      seenByOrigin.push(pathname + search);
    };
    origin = await listen({ fetch: (request) => (record(request), geoshelf.fetch(request)) }, { port, hostname: '127.0.0.1' });
    const script = await bundleWorker();
    const worker = { modules: true, script, compatibilityDate: '2026-07-01', r2Buckets: { BUCKET: 'site' } };
    mf = new Miniflare({
      workers: [
        { ...worker, name: 'edge', bindings: { ORIGIN: originUrl, PREFIX } },
        // The same bucket with the server gone: nothing listens on this port.
        { ...worker, name: 'edge-origin-down', bindings: { ORIGIN: `http://127.0.0.1:${await findFreePort()}`, PREFIX } },
      ],
    });
    edge = await mf.ready;
    await fillBucket(await getBucket(mf, 'edge'), { distDir: config.distDir, dataDir: config.dataDir, prefix: PREFIX, maxAge: config.cacheMaxAge, dataUnder: 'geonames/cities/' });
  }, 180_000);
  afterAll(async () => {
    await mf?.dispose();
    await origin?.close(true);
    await geoshelf?.close();
  });
  beforeEach(() => {
    seenByOrigin.length = 0;
  });

  const viaEdge = (path: string, headers: Record<string, string> = {}, method = 'GET') => sendRaw(new URL(path, edge).href, { headers, method });
  const viaOrigin = (path: string, method = 'GET') => sendRaw(originUrl + path, { method });
  const distFile = (key: string) => readFile(join(config.distDir, key));
  const expectSameAnswer = (edgeAnswer: RawResponse, originAnswer: RawResponse) => {
    expect(edgeAnswer.status).toBe(originAnswer.status);
    expect(edgeAnswer.headers['content-type']).toBe(originAnswer.headers['content-type']);
    expect(edgeAnswer.body.equals(originAnswer.body)).toBe(true);
  };

  it.each([
    ['/', 'index.html'],
    ['/collections/geonames/', 'collections/geonames/index.html'],
    ['/collections/geonames/datasets/cities/files/cities-1000/', 'collections/geonames/datasets/cities/files/cities-1000/index.html'],
    ['/llms.txt', 'llms.txt'],
    ['/.well-known/api-catalog', '.well-known/api-catalog/index.json'],
    ['/stac/geonames/', 'stac/geonames/index.json'],
    ['/api', 'api/index.json'],
    ['/api/collections/geonames/', 'api/collections/geonames/index.json'],
    ['/api/collections/geonames?query=Cities&limit=50', 'api/collections/geonames/_query/search=cities.json'],
  ])('serves %s from the bucket: the bytes of %s with its type, ETag and Cache-Control', async (path, key) => {
    const answer = await viaEdge(path);
    expect(answer.status).toBe(200);
    expect(answer.body.equals(await distFile(key))).toBe(true);
    expect(answer.headers['content-type']).toBe(manifest.files[key]!.type);
    expect(answer.headers.etag).toBe(`"${manifest.files[key]!.sha256}"`);
    expect(answer.headers['cache-control']).toBe(`public, max-age=${config.cacheMaxAge}`);
    expect(seenByOrigin).toEqual([]);
  });

  it('lets browsers keep content-hashed assets for a year', async () => {
    const asset = Object.keys(manifest.files).find((key) => key.startsWith('_site/assets/') && key.endsWith('.js'))!;
    const answer = await viaEdge(`/${asset}`);
    expect(answer.body.equals(await distFile(asset))).toBe(true);
    expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it.each([
    ['br, gzip', '.br', 'br'],
    ['gzip', '.gz', 'gzip'],
  ])('sends the precompressed sibling to a client accepting %s, with its own ETag', async (accepted, suffix, encoding) => {
    const key = 'api/collections/geonames/index.json';
    const answer = await viaEdge('/api/collections/geonames', { 'accept-encoding': accepted });
    expect(answer.headers['content-encoding']).toBe(encoding);
    expect(answer.headers.vary).toBe('Accept-Encoding');
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers.etag).toBe(`"${manifest.files[key]!.sha256}${suffix}"`);
    expect(answer.body.equals(await distFile(key + suffix))).toBe(true);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const answer = await viaEdge('/api/collections', {}, 'HEAD');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe(String(manifest.files['api/collections/index.json']!.bytes));
    expect(answer.headers.etag).toBe(`"${manifest.files['api/collections/index.json']!.sha256}"`);
    expect(answer.body.length).toBe(0);
  });

  it('answers 304 to a client holding the content in any encoding', async () => {
    const { sha256 } = manifest.files['search/index.html']!;
    for (const held of [`"${sha256}"`, `"${sha256}.br"`]) {
      const answer = await viaEdge('/search/', { 'if-none-match': held, 'accept-encoding': 'gzip' });
      expect(answer.status).toBe(304);
      expect(answer.body.length).toBe(0);
    }
  });

  it('asks the server for a slice that was not prebuilt, and passes on its bytes', async () => {
    expect(manifest.files['api/collections/geonames/_query/limit=3&offset=1.json']).toBeUndefined();
    const answer = await viaEdge(NOT_PREBUILT);
    expect(answer.status).toBe(200);
    expect(seenByOrigin).toEqual([NOT_PREBUILT]);
    expectSameAnswer(answer, await viaOrigin(NOT_PREBUILT));
  });

  it('passes on the server\'s Problem for a bad parameter', async () => {
    const answer = await viaEdge('/api/collections/geonames?limit=banana');
    expect(answer.status).toBe(400);
    expect(seenByOrigin).toEqual(['/api/collections/geonames?limit=banana']);
    expectSameAnswer(answer, await viaOrigin('/api/collections/geonames?limit=banana'));
  });

  it.each([
    ['/stac/api', 'GET'],
    ['/features', 'GET'],
    ['/api/collections', 'POST'],
  ])('sends %s (%s) to the server', async (path, method) => {
    const answer = await viaEdge(path, {}, method);
    expect(seenByOrigin).toEqual([path]);
    expectSameAnswer(answer, await viaOrigin(path, method));
  });

  it.each([
    ['/no/such/page/', '404.html'],
    ['/api/no-such-route', 'api/_problems/not-found.json'],
  ])('answers %s with %s and status 404, without the server', async (path, key) => {
    const answer = await viaEdge(path);
    expect(answer.status).toBe(404);
    expect(answer.body.equals(await distFile(key))).toBe(true);
    expect(seenByOrigin).toEqual([]);
  });

  it('reads byte ranges of a data file: the footer of a GeoParquet file', async () => {
    const file = await readFile(join(config.dataDir, PARQUET));
    const tail = await viaEdge(`/data/${PARQUET}`, { range: 'bytes=-8' });
    expect(tail.status).toBe(206);
    expect(tail.headers['content-range']).toBe(`bytes ${file.length - 8}-${file.length - 1}/${file.length}`);
    expect(tail.body.equals(file.subarray(-8))).toBe(true);
    expect(tail.body.subarray(4).toString()).toBe('PAR1');
    const head = await viaEdge(`/data/${PARQUET}`, { range: 'bytes=0-3' });
    expect([head.status, head.body.toString()]).toEqual([206, 'PAR1']);
    expect(head.headers['content-type']).toBe('application/vnd.apache.parquet');
    expect(head.headers.etag).toBe(`"${hash('sha256', file, 'hex')}"`);
  });

  describe('with the server down', () => {
    const viaEdgeOriginDown = async (path: string) => {
      const response = await fetchWorker(mf, 'edge-origin-down', new URL(path, edge).href);
      return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
    };

    it.each([
      ['/search/?q=cities', 'search/index.html'],
      ['/console/?source=c:geonames/cities/cities-1000@3.1.0&sql=SELECT+1', 'console/index.html'],
      ['/api/collections/geonames?query=cities', 'api/collections/geonames/_query/search=cities.json'],
    ])('still serves %s from the bucket', async (path, key) => {
      const answer = await viaEdgeOriginDown(path);
      expect(answer.status).toBe(200);
      expect(answer.body.equals(await distFile(key))).toBe(true);
    });

    it('answers 502 for what only the server can answer', async () => {
      expect((await viaEdgeOriginDown(NOT_PREBUILT)).status).toBe(502);
    });
  });
});
