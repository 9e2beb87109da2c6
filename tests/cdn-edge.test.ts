import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCommand } from '../scripts/nginx.ts';
import { runScript, type WatchedProcess } from './helpers/processes.ts';
import { startStrictBucket, type StrictBucket } from './helpers/strict-bucket.ts';
import { findFreePort } from './helpers/web-app.ts';

const HAS_NGINX = hasCommand('nginx');
if (!HAS_NGINX) console.warn('tests/cdn-edge.test.ts is mostly skipped: nginx is not installed (apt-get install -y nginx)');

describe('npm run cdn, refusing what it cannot run', () => {
  it('names a bad --bucket-url in one line, without repeating it, and exits 2 as for any wrong command line', async () => {
    const cdn = runScript(['deploy/cdn.ts', '--bucket-url', 'secret-looking-thing', '--origin', 'http://127.0.0.1:1'], process.env);
    expect(await cdn.exitCode()).toBe(2);
    expect(cdn.output().trim().split('\n')[0]).toBe('error: --bucket-url is not a URL; give one such as http://127.0.0.1:9000/site/v1');
    expect(cdn.output()).not.toContain('secret-looking-thing');
  });

  it('says how to install nginx when it is missing, and exits 1', async () => {
    const path = (process.env.PATH ?? '').split(delimiter).filter((dir) => !existsSync(join(dir, 'nginx'))).join(delimiter);
    const cdn = runScript(['deploy/cdn.ts', '--bucket-url', 'http://127.0.0.1:1/site', '--origin', 'http://127.0.0.1:1'], { ...process.env, PATH: path });
    expect(await cdn.exitCode()).toBe(1);
    expect(cdn.output().trim()).toBe('✖ nginx is not installed: install with `apt-get install -y nginx`');
  });
});

describe.skipIf(!HAS_NGINX)('npm run cdn in front of a bucket that answers 403 for a missing key, as S3 does', () => {
  const NOT_FOUND = '{"type":"urn:geoshelf:problem:not-found","status":404}';
  let bucket: StrictBucket;
  let cdn: WatchedProcess;
  let url = '';
  const keysAskedFor = async (path: string, headers: Record<string, string>) => {
    bucket.asked.length = 0;
    const response = await fetch(`${url}${path}`, { headers });
    return { response, body: await response.text(), keys: bucket.asked.map((asked) => asked.slice('/b/v1/'.length)) };
  };

  beforeAll(async () => {
    bucket = await startStrictBucket({
      '/b/v1/search/index.html': { type: 'text/html; charset=utf-8', body: 'the search page' },
      '/b/v1/404.html': { type: 'text/html; charset=utf-8', body: 'the 404 page' },
      '/b/v1/api/_problems/not-found.json': { type: 'application/problem+json', body: NOT_FOUND },
    });
    const port = await findFreePort();
    url = `http://127.0.0.1:${port}`;
    // Nothing listens on port 1: the origin is down.
    cdn = runScript(['deploy/cdn.ts', '--bucket-url', `${bucket.endpoint}/b/v1`, '--origin', 'http://127.0.0.1:1', '--port', String(port)], process.env);
    await cdn.waitFor(/cdn ready/);
  });
  afterAll(async () => {
    cdn?.child.kill('SIGTERM');
    await cdn?.exitCode();
    await bucket?.close();
  });

  it.each([
    ['br', ['collections/x/index.html.br', 'collections/x/index.html', 'collections/x/index.json.br', 'collections/x/index.json', '404.html.br', '404.html']],
    ['gzip', ['collections/x/index.html.gz', 'collections/x/index.html', 'collections/x/index.json.gz', 'collections/x/index.json', '404.html.gz', '404.html']],
    ['identity', ['collections/x/index.html', 'collections/x/index.json', '404.html']],
  ])('tries a page\'s keys in order for Accept-Encoding: %s, then answers 404.html with status 404', async (accept, keys) => {
    const answer = await keysAskedFor('/collections/x/', { 'accept-encoding': accept });
    expect(answer.keys).toEqual(keys);
    expect(answer.response.status).toBe(404);
    expect(answer.body).toBe('the 404 page');
    expect(answer.response.headers.get('etag')).toBe(`"${'f'.repeat(64)}"`);
    expect(answer.response.headers.get('x-amz-request-id')).toBeNull();
  });

  it('asks for a page without its query string', async () => {
    const answer = await keysAskedFor('/search/?q=cities&x=%2F', { 'accept-encoding': 'identity' });
    expect(answer.keys).toEqual(['search/index.html']);
    expect(answer.body).toBe('the search page');
  });

  it('answers an /api path the bucket lacks with the tree\'s 404 Problem while the origin is down', async () => {
    const answer = await keysAskedFor('/api/collections/x', { 'accept-encoding': 'identity' });
    expect(answer.keys).toEqual(['api/collections/x/index.json', 'api/_problems/not-found.json']);
    expect(answer.response.status).toBe(404);
    expect(answer.response.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.body).toBe(NOT_FOUND);
  });

  it.each([
    ['GET', '/api/queries/abc/tiles/0/0/0.mvt'],
    ['POST', '/api/queries'],
    ['GET', '/api/collections/a/datasets/b/files/c/sources/1/download-zip'],
    ['GET', '/stac/api/search?limit=1'],
    ['GET', '/features/collections'],
    ['POST', '/mcp'],
    ['GET', '/api/collections?offset=50'],
    ['POST', '/collections/x/'],
  ])('sends %s %s to the origin alone (down here: 502)', async (method, path) => {
    bucket.asked.length = 0;
    const response = await fetch(`${url}${path}`, { method, body: method === 'POST' ? '{}' : undefined });
    expect(response.status).toBe(502);
    expect(bucket.asked).toEqual([]);
  });

  it('answers a CORS preflight for a file itself, allowing a Range header from any origin', async () => {
    const response = await fetch(`${url}/data/x.parquet`, { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' } });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toBe('range');
    expect(bucket.asked).not.toContain('/b/v1/data/x.parquet');
  });
});
