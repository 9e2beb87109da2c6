import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { hasCommand } from '../scripts/nginx.ts';
import { browserUnavailable, collectPageErrors, findForeignRequests, launchBrowser, recordRequests, type RequestLog } from './helpers/browser.ts';
import { startCdnSite, type CdnSite } from './helpers/cdn-site.ts';

const HAS_NGINX = hasCommand('nginx');
if (!HAS_NGINX) console.warn('tests/cdn.test.ts is skipped: nginx is not installed (apt-get install -y nginx)');

const CITIES = '/collections/geonames/datasets/cities/files/cities-1000/';
const PARQUET = '/data/geonames/cities/3.1.0/cities-1000.parquet';
const NOT_PREBUILT = '/api/collections/geonames?limit=3&offset=1';
const CONSOLE_SQL = 'SELECT name, population, geometry FROM c WHERE country = \'IS\' ORDER BY population DESC';
const CONSOLE = `/console/?source=c:geonames/cities/cities-1000&sql=${encodeURIComponent(CONSOLE_SQL)}`;

describe.skipIf(!HAS_NGINX)('the sample published to s3rver, through npm run cdn, with a geoshelf server as origin', () => {
  let site: CdnSite;
  let browser: Browser | undefined;
  let page: Page;
  let errors: string[];
  const dist = (key: string) => readFile(join(site.config.distDir, key));
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${site.url}${path}`, { headers });
  const open = async (path: string): Promise<RequestLog> => {
    page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    errors = collectPageErrors(page);
    const log = recordRequests(page);
    await page.goto(`${site.url}${path}`);
    return log;
  };

  beforeAll(async () => {
    [site, browser] = await Promise.all([startCdnSite(), browserUnavailable ? undefined : launchBrowser()]);
    console.log(`cdn test: build ${site.timings.build} s, publish ${site.timings.publish} s, origin and edge up in ${site.timings.start} s`);
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it.each([
    ['/', 'index.html'],
    ['/collections/geonames/', 'collections/geonames/index.html'],
    ['/collections/geonames', 'collections/geonames/index.html'],
    ['/api', 'api/index.json'],
    ['/api/collections/geonames/', 'api/collections/geonames/index.json'],
    ['/stac/geonames', 'stac/geonames/index.json'],
    ['/.well-known/api-catalog', '.well-known/api-catalog/index.json'],
    ['/llms.txt', 'llms.txt'],
  ])('serves %s as the built %s, with its type and ETag', async (path, key) => {
    const response = await get(path, { 'accept-encoding': 'identity' });
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(await dist(key))).toBe(true);
    expect(response.headers.get('content-type')).toBe(site.manifest.files[key]!.type);
    expect(response.headers.get('etag')).toBe(`"${site.manifest.files[key]!.sha256}"`);
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect([...response.headers.keys()].filter((name) => name.startsWith('x-amz-'))).toEqual([]);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const response = await fetch(`${site.url}/collections/geonames/`, { method: 'HEAD', headers: { 'accept-encoding': 'br' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('br');
    expect(Number(response.headers.get('content-length'))).toBe(site.manifest.files['collections/geonames/index.html']!.br);
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });

  it.each([
    ['br', 'br', '.br'],
    ['gzip, deflate', 'gzip', '.gz'],
    ['gzip, deflate, br, zstd', 'br', '.br'],
  ])('picks the sibling for Accept-Encoding: %s, with Content-Encoding, ETag and Vary', async (accept, encoding, suffix) => {
    const key = 'api/collections/geonames/index.json';
    const entry = site.manifest.files[key]!;
    const response = await get('/api/collections/geonames', { 'accept-encoding': accept });
    expect(response.headers.get('content-encoding')).toBe(encoding);
    expect(response.headers.get('etag')).toBe(`"${entry.sha256}${suffix}"`);
    expect(response.headers.get('vary')).toBe('Accept-Encoding');
    expect(Number(response.headers.get('content-length'))).toBe(suffix === '.br' ? entry.br : entry.gz);
    // fetch decodes the body as a browser does: the document itself.
    expect(Buffer.from(await response.arrayBuffer()).equals(await dist(key))).toBe(true);
  });

  it('answers an unknown page with 404.html and status 404, and an unknown /api path with the server\'s 404 Problem', async () => {
    const page = await get('/collections/no-such-thing/', { 'accept-encoding': 'identity' });
    expect(page.status).toBe(404);
    expect(Buffer.from(await page.arrayBuffer()).equals(await dist('404.html'))).toBe(true);
    const api = await get('/api/collections/no-such-thing');
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toBe('application/problem+json');
    expect((await api.json()).detail).toMatch(/no-such-thing/);
  });

  it('sends /api requests with a query string to the origin, which computes a slice that was not prebuilt', async () => {
    expect(Object.keys(site.manifest.files).filter((key) => key.startsWith('api/collections/geonames/_query/') && key.includes('offset'))).toEqual([]);
    const [viaEdge, direct] = await Promise.all([get(NOT_PREBUILT), fetch(`${site.originUrl}${NOT_PREBUILT}`)]);
    expect(viaEdge.status).toBe(200);
    const body = await viaEdge.text();
    expect(body).toBe(await direct.text());
    expect(JSON.parse(body).datasets.length).toBeLessThanOrEqual(3);
  });

  it('answers byte ranges of a data file from the bucket: 206, Content-Range, and the file\'s bytes', async () => {
    const file = await readFile(join(site.config.dataDir, PARQUET.slice('/data/'.length)));
    const response = await get(PARQUET, { range: 'bytes=1000-1999' });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes 1000-1999/${file.length}`);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('access-control-expose-headers')).toMatch(/Content-Range.*Accept-Ranges.*Content-Length/);
    expect(Buffer.from(await response.arrayBuffer()).equals(file.subarray(1000, 2000))).toBe(true);
  });

  describe.skipIf(browserUnavailable)('in Chromium, with the query service up', () => {
    it('browses from the home page to a file, every request to the edge', async () => {
      const log = await open('/');
      await page.getByRole('link', { name: 'GeoNames populated places' }).first().click();
      await page.getByRole('link', { name: 'Cities and towns of the world' }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe('Cities and towns of the world');
      expect(findForeignRequests(await log.settle(), [site.url])).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    });

    it('finds a dataset on the search page', async () => {
      const log = await open('/search/?q=feature_code');
      await page.locator('[data-search-results] a', { hasText: 'Cities and towns of the world' }).first().waitFor({ timeout: 15_000 });
      expect(findForeignRequests(await log.settle(), [site.url])).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    });

    it('previews the first 100 rows of a file from byte ranges of its GeoParquet in the bucket', async () => {
      const log = await open(CITIES);
      await expect.poll(() => page.locator('.preview-table tbody tr').count(), { timeout: 30_000 }).toBe(100);
      const parquet = (await log.settle()).filter((request) => request.url.endsWith('.parquet'));
      expect(parquet.length).toBeGreaterThan(1);
      expect(parquet.every((request) => request.status === 206 && request.range !== undefined)).toBe(true);
      expect(errors).toEqual([]);
      await page.close();
    }, 120_000);

    it('draws the whole-file map from byte ranges of its PMTiles archive in the bucket', async () => {
      const log = await open(CITIES);
      const map = page.locator('.preview-map');
      await page.getByRole('button', { name: 'Explore the map' }).click();
      await expect.poll(() => map.getAttribute('data-archive'), { timeout: 30_000 }).toBe('drawn');
      await expect.poll(async () => Number(await map.getAttribute('data-rendered-features')), { timeout: 30_000 }).toBeGreaterThan(100);
      const archive = (await log.settle()).filter((request) => request.url.endsWith('.pmtiles'));
      expect(archive.length).toBeGreaterThan(1);
      expect(archive.every((request) => request.status === 206 && request.range !== undefined)).toBe(true);
      expect(errors).toEqual([]);
      await page.close();
    }, 120_000);

    it('runs SQL on the query service through the edge, and maps the result from its tiles', async () => {
      const log = await open(CONSOLE);
      await expect.poll(() => page.locator('input[value="server"]').isChecked(), { timeout: 15_000 }).toBe(true);
      await expect.poll(() => page.locator('[data-mode-note]').textContent(), { timeout: 15_000 }).toMatch(/query service/);
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.locator('[data-console][data-state="done"], [data-console][data-state="error"]').waitFor({ timeout: 60_000 });
      await expect(page.locator('[data-console]').getAttribute('data-state')).resolves.toBe('done');
      await expect(page.locator('[data-table] tbody tr').first().textContent()).resolves.toContain('Reykjavík');
      await expect.poll(async () => Number(await page.locator('[data-map]').getAttribute('data-rendered-features')), { timeout: 30_000 }).toBeGreaterThan(0);
      const requests = await log.settle();
      expect(requests.some((request) => request.method === 'POST' && request.url === `${site.url}/api/queries` && request.status === 200)).toBe(true);
      expect(requests.some((request) => /\/api\/queries\/[^/]+\/tiles\//.test(request.url) && request.status === 200)).toBe(true);
      expect(findForeignRequests(requests, [site.url])).toEqual([]);
      await page.close();
    }, 120_000);
  });

  describe('and with the origin stopped', () => {
    beforeAll(() => site.stopOrigin(), 30_000);

    it('still serves pages with a query string, /api documents and 404 Problems from the bucket, and 502 for what needs the server', async () => {
      const search = await get('/search/?q=x', { 'accept-encoding': 'identity' });
      expect(search.status).toBe(200);
      expect(Buffer.from(await search.arrayBuffer()).equals(await dist('search/index.html'))).toBe(true);
      expect((await get('/console/?source=c:geonames/cities/cities-1000')).status).toBe(200);
      expect((await get('/api/collections')).status).toBe(200);
      const unknown = await get('/api/no-such-route');
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('content-type')).toBe('application/problem+json');
      expect((await get(NOT_PREBUILT)).status).toBe(502);
      expect((await fetch(`${site.url}/api/queries`, { method: 'POST', body: '{}' })).status).toBe(502);
    });

    it.skipIf(browserUnavailable)('runs SQL in the browser on the file in the bucket', async () => {
      const log = await open(CONSOLE);
      await expect.poll(() => page.locator('input[value="browser"]').isChecked(), { timeout: 15_000 }).toBe(true);
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.locator('[data-console][data-state="done"], [data-console][data-state="error"]').waitFor({ timeout: 90_000 });
      await expect(page.locator('[data-console]').getAttribute('data-state')).resolves.toBe('done');
      await expect(page.locator('[data-table] tbody tr').first().textContent()).resolves.toContain('Reykjavík');
      const requests = await log.settle();
      expect(requests.some((request) => /duckdb.*\.wasm$/.test(request.url) && request.status === 200)).toBe(true);
      expect(requests.some((request) => request.url.endsWith('.parquet') && (request.status === 200 || request.status === 206))).toBe(true);
      expect(findForeignRequests(requests, [site.url])).toEqual([]);
      await page.close();
    }, 120_000);
  });

  it('stops on SIGTERM, leaving no nginx and no scratch folder', async () => {
    const folder = site.cdn.output().match(/configuration and logs in (\S+)\)/)![1]!;
    const nginxPid = Number(site.cdn.output().match(/nginx pid (\d+)/)![1]);
    expect(existsSync(folder)).toBe(true);
    site.cdn.child.kill('SIGTERM');
    expect(await site.cdn.exitCode()).toBe(0);
    expect(existsSync(folder)).toBe(false);
    expect(() => process.kill(nginxPid, 0)).toThrow();
    await expect(fetch(`${site.url}/`)).rejects.toThrow();
  });
});
