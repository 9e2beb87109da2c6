import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { brotliDecompressSync, crc32, gunzipSync } from 'node:zlib';
import { serve } from 'srvx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProblemSchema } from '../schemas/problem.ts';
import { QueryErrorSchema } from '../schemas/query.ts';
import { COMPRESS_MIN_BYTES, PARQUET_TYPE } from '../core/constants.ts';
import { POOL_THRESHOLD } from '../generator/emit/write-tree.ts';
import { get, sampleConfig, sampleManifest, sampleServer } from './helpers/sample.ts';

const server = sampleServer();
const collection = '/api/collections/natural-earth';
const dataset = `${collection}/datasets/countries`;
const file = `${dataset}/files/countries-110m`;

describe('static documents', () => {
  it.each([
    ['/api', 'application/json'],
    ['/api/openapi', 'application/json'],
    ['/api/health', 'application/json'],
    ['/api/collections', 'application/json'],
    ['/api/collections?include=datasets,files', 'application/json'],
    [collection, 'application/json'],
    [`${collection}/datasets/tags`, 'application/json'],
    [dataset, 'application/json'],
    [`${dataset}?include_urls=true`, 'application/json'],
    [file, 'application/json'],
    [`${file}/schema`, 'application/json'],
    ['/api/datasets', 'application/json'],
    ['/api/datasets/stats', 'application/json'],
    ['/llms.txt', 'text/plain; charset=utf-8'],
    ['/.well-known/api-catalog', 'application/linkset+json'],
  ])('serves %s as %s with an ETag and a cache lifetime', async (path, type) => {
    const response = await get(server, path);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(type);
    expect(response.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    expect(response.headers.get('cache-control')).toBe(`public, max-age=${sampleConfig().cacheMaxAge}`);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    if (type.startsWith('application/')) expect(await response.json()).toBeTruthy();
  });

  it('lets caches keep a content-hashed asset for a year, as the published object does', async () => {
    const asset = Object.keys(sampleManifest().files).find((key) => key.startsWith('_site/assets/') && key.endsWith('.js'))!;
    const response = await get(server, `/${asset}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('answers 304 to a matching If-None-Match, for any encoding of the same content', async () => {
    const first = await get(server, collection, { 'accept-encoding': 'br' });
    const tag = first.headers.get('etag')!;
    expect(tag).toMatch(/\.br"$/);
    const again = await get(server, collection, { 'if-none-match': tag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await get(server, collection, { 'if-none-match': '"stale"' })).status).toBe(200);
  });

  it('sends brotli or gzip when accepted, decoding to the same bytes', async () => {
    const plain = Buffer.from(await (await get(server, collection)).arrayBuffer());
    const br = await get(server, collection, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(br.headers.get('vary')).toBe('Accept-Encoding');
    expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).equals(plain)).toBe(true);
    const gz = await get(server, collection, { 'accept-encoding': 'gzip' });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).equals(plain)).toBe(true);
    const refused = await get(server, collection, { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers.get('content-encoding')).toBeNull();
  });

  it('has siblings for every compressible document, each decoding to its bytes at the size the manifest records', async () => {
    // The build's writer threads compress and write them.
    const { files } = sampleManifest();
    const compressed = Object.entries(files).filter(([, entry]) => entry.br !== undefined);
    // Every document large enough, and not Parquet (compressed already), has them.
    const compressible = Object.entries(files).filter(([, entry]) => entry.bytes >= COMPRESS_MIN_BYTES && entry.type !== PARQUET_TYPE);
    expect(compressed.map(([key]) => key)).toEqual(compressible.map(([key]) => key));
    // More than a build writes on its main thread: a fresh build of the sample goes through the writer threads.
    expect(compressed.length).toBeGreaterThan(POOL_THRESHOLD);
    for (const [key, entry] of compressed) {
      const path = join(sampleConfig().distDir, key);
      const [body, br, gz] = await Promise.all([readFile(path), readFile(`${path}.br`), readFile(`${path}.gz`)]);
      expect(br.length, key).toBe(entry.br);
      expect(gz.length, key).toBe(entry.gz);
      expect(brotliDecompressSync(br).equals(body), key).toBe(true);
      expect(gunzipSync(gz).equals(body), key).toBe(true);
    }
  });

  it('answers HEAD with the headers and no body', async () => {
    const response = await server.fetch(new Request(`http://localhost${collection}`, { method: 'HEAD' }));
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await response.text()).toBe('');
  });

  it('answers a CORS preflight for the query routes with the token header allowed', async () => {
    const response = await server.fetch(new Request('http://localhost/api/queries/abc/pages', {
      method: 'OPTIONS',
      headers: { origin: 'https://site.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-service-query-token' },
    }));
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toContain('X-Service-Query-Token');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
  });
});

describe('bad requests', () => {
  it.each([
    [`${collection}?limit=0`, 'limit'],
    [`${collection}?limit=-1`, 'limit'],
    [`${collection}?limit=abc`, 'limit'],
    [`${collection}?offset=-1`, 'offset'],
    [`${collection}?offset=1.5`, 'offset'],
    [`${file}/schema?column_limit=0`, 'column_limit'],
    [`${file}/schema?column_limit=51`, 'column_limit'],
    [`${file}/schema?column_offset=-1`, 'column_offset'],
    ['/api/datasets/abc', '{id}'],
    ['/api/datasets/0', '{id}'],
    ['/api/datasets/01', 'without leading zeros'],
    [`${collection}?q=land`, '"q"'],
    [`${collection}?include=everything`, 'include'],
    [`${collection}?tag_filters=nocolon`, 'tag_filters'],
    [`${collection}?tag_filters=colour:blue`, 'colour'],
    [`${collection}?limit=5&limit=6`, 'more than once'],
    [`${collection}?tag_filters=constructor:x`, '"constructor" is not used'],
    ['/api/collections?probe=1', 'accepts include'],
  ])('%s answers a 400 Problem naming %s', async (path, named) => {
    const response = await get(server, path);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const problem = ProblemSchema.parse(await response.json());
    expect(problem.status).toBe(400);
    expect(problem.detail).toContain(named);
  });

  it.each([
    '/api/collections/atlantis',
    '/api/collections/natural-earth/datasets/atlantis',
    '/api/collections/natural-earth/datasets/countries/files/atlantis',
    '/api/collections/natural-earth/datasets/countries/files/countries-110m/schema?version=9.9.9',
    '/api/collections/atlantis/datasets/tags',
    '/api/datasets/999999',
    '/api/nothing/here',
    '/api/collections/natural-earth/datasets',
    '/api/items',
  ])('%s answers a 404 Problem linking back to the entry points', async (path) => {
    const response = await get(server, path);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const problem = ProblemSchema.parse(await response.json());
    expect(problem.links).toEqual({
      api: 'https://catalog.example.org/api',
      openapi: 'https://catalog.example.org/api/openapi',
      llms_txt: 'https://catalog.example.org/llms.txt',
    });
  });

  it('refuses writes to the read-only catalog with 405 and an Allow header', async () => {
    const response = await server.fetch(new Request(`http://localhost${collection}`, { method: 'POST', body: '{}' }));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(ProblemSchema.parse(await response.json()).status).toBe(405);
  });

  it('answers a malformed query request with a QueryError, not a Problem', async () => {
    const response = await server.fetch(new Request('http://localhost/api/queries', { method: 'POST', body: '{}' }));
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(QueryErrorSchema.parse(await response.json()).code).toBe('invalid_request');
  });
});

describe('paths that try to leave dist/', () => {
  const secrets = ['"devDependencies"', 'root:x:0', '"format": "geoshelf-ledger/1"', '"model"'];

  it.each([
    '/..%2f..%2fpackage.json',
    '/api/..%2f..%2fpackage.json',
    '/%2e%2e%2f%2e%2e%2fpackage.json',
    '/..%5c..%5cpackage.json',
    '/llms.txt%00.json',
    '/_geoshelf/model.json',
    '/manifest.json',
    '/data/..%2fledger.json',
    '/data/%2e%2e/%2e%2e/package.json',
    '/%252e%252e/package.json',
  ])('%s reveals nothing', async (path) => {
    const response = await get(server, path);
    expect([400, 404]).toContain(response.status);
    const text = await response.text();
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  describe('over a real socket, where paths arrive unnormalised', () => {
    let port = 0;
    let close: () => Promise<void> = async () => undefined;
    beforeAll(async () => {
      const listening = serve({ fetch: server.fetch, port: 0, hostname: '127.0.0.1', silent: true });
      await listening.ready();
      port = Number(new URL(listening.url!).port);
      close = () => listening.close(true);
    });
    afterAll(() => close());

    const rawGet = (path: string, headers = '') => new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(`GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });

    it.each(['/../../etc/passwd', '/api/../../package.json', '/data/../../package.json', '/./.././ledger.json'])('%s reveals nothing', async (path) => {
      const raw = await rawGet(path);
      expect(raw).toMatch(/^HTTP\/1\.1 (400|404)/);
      for (const secret of secrets) expect(raw).not.toContain(secret);
    });

    it('answers a repeated URL from its fast path with the same headers and body as the first time', async () => {
      const strip = (raw: string) => raw.replace(/^date: .*$/im, '');
      for (const headers of ['', 'Accept-Encoding: br\r\n', 'Accept-Encoding: gzip\r\n']) {
        const first = await rawGet(`${collection}?offset=0`, headers);
        const second = await rawGet(`${collection}?offset=0`, headers);
        expect(first).toMatch(/^HTTP\/1\.1 200/);
        expect(strip(second)).toBe(strip(first));
      }
      const tag = /etag: (".*")/i.exec(await rawGet(collection))![1];
      expect(await rawGet(collection, `If-None-Match: ${tag}\r\n`)).toMatch(/^HTTP\/1\.1 304/);
    });
  });
});

describe('unknown query parameters', () => {
  it.each(['/api', '/api/openapi', '/api/health', '/api/datasets', '/api/datasets/stats', `${file}`])('are ignored by %s, which takes none: same document, same ETag', async (path) => {
    const plain = await get(server, path);
    const busted = await get(server, `${path}?_=${Date.now()}&_=again&probe`);
    expect(busted.status).toBe(200);
    expect(busted.headers.get('etag')).toBe(plain.headers.get('etag'));
  });
});

describe('the memo of resolved URLs', () => {
  it('stays within its byte budget under thousands of distinct long URLs, and remembers no error', async () => {
    const fresh = sampleServer();
    const memo = fresh.snapshot().memo;
    const filler = 'x'.repeat(1500);
    for (let round = 0; round < 6000; round++) {
      const path = round % 3 === 0 ? '/llms.txt' : round % 3 === 1 ? '/api/health' : '/api/datasets/stats';
      expect((await get(fresh, `${path}?cb=${round}${filler}`)).status).toBe(200);
    }
    expect(memo.bytes).toBeLessThanOrEqual(memo.budgetBytes);
    expect(memo.size).toBeGreaterThan(1000);
    await get(fresh, `${collection}?limit=0`);
    await get(fresh, '/api/nothing');
    expect(memo.get(`${collection}?limit=0`)).toBeUndefined();
    expect(memo.get('/api/nothing')).toBeUndefined();
    expect(memo.get(`/llms.txt?cb=0${filler}`)).toBeUndefined();
    await get(fresh, '/llms.txt');
    expect(memo.get('/llms.txt')).toBe('llms.txt');
    await fresh.close();
  });
});

describe('computed answers', () => {
  it('answers a parameter combination that was not prebuilt, with the same shape and canonical links', async () => {
    const manifest = sampleManifest();
    expect(Object.keys(manifest.files).some((key) => key.includes('limit=3'))).toBe(false);
    const response = await get(server, `${collection}?LIMIT=1`);
    expect(response.status).toBe(400);
    const page = await (await get(server, `${collection}?offset=1&limit=3&omit=description`)).json();
    expect(page.limit).toBe(3);
    expect(page.offset).toBe(1);
    expect(page.links.self).toBe('https://catalog.example.org/api/collections/natural-earth?limit=3&offset=1&omit=description');
    expect(page.datasets.every((item: { description?: string }) => item.description === undefined)).toBe(true);
  });
});

describe('downloads', () => {
  it('serves a source file under /data with byte ranges, as DuckDB and GDAL read Parquet remotely', async () => {
    const detail = await (await get(server, file)).json();
    const url = new URL(detail.file.formats[0].sources[0].url);
    const whole = await get(server, url.pathname);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
    const tail = await get(server, url.pathname, { range: 'bytes=-8' });
    expect(tail.status).toBe(206);
    expect(tail.headers.get('content-range')).toBe(`bytes ${bytes.length - 8}-${bytes.length - 1}/${bytes.length}`);
    expect(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(-8))).toBe(true);
    expect((await get(server, url.pathname, { range: `bytes=${bytes.length}-` })).status).toBe(416);
  });

  it('zips a source file behind its download_zip link', async () => {
    const detail = await (await get(server, file)).json();
    const source = detail.file.formats[0].sources[0];
    const response = await get(server, new URL(source.links.download_zip).pathname);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    const zip = Buffer.from(await response.arrayBuffer());
    const original = Buffer.from(await (await get(server, new URL(source.url).pathname)).arrayBuffer());
    expect(zip.readUInt32LE(0)).toBe(0x04034b50);
    const nameLength = zip.readUInt16LE(26);
    expect(zip.subarray(30, 30 + nameLength).toString()).toBe(source.location.path.split('/').at(-1));
    expect(zip.subarray(30 + nameLength, 30 + nameLength + original.length).equals(original)).toBe(true);
    expect(zip.readUInt32LE(zip.length - 22)).toBe(0x06054b50);
    const central = zip.readUInt32LE(zip.length - 22 + 16);
    expect(zip.readUInt32LE(central)).toBe(0x02014b50);
    expect(zip.readUInt32LE(central + 16)).toBe(crc32(original));
  });

  it('answers 404 for a source the file does not have', async () => {
    const response = await get(server, `${file}/sources/999999/download-zip`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });
});
