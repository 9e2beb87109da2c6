import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findSeriousViolations } from './helpers/axe.ts';
import { browserUnavailable, collectPageErrors, findForeignRequests, launchBrowser, recordRequests } from './helpers/browser.ts';
import { ROOT } from './helpers/catalog.ts';
import { serveStatic, type StaticHost } from './helpers/static-host.ts';

const PARQUET = join(ROOT, 'catalog-data/data/us-census/us-state-capitals/3.1.0/us-state-capitals.parquet');
const PAGE = '<!doctype html><html lang="en"><head><title>Smoke</title></head><body><main><h1>Smoke</h1></main></body></html>';
const BAD_PAGE = '<html><body><img src="/missing.png"><button></button></body></html>';
const GOOD_PAGE = `<!doctype html><html lang="en"><head><title>Good</title></head><body><main><h1>Good</h1>
  <img src="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E" alt="An empty drawing">
  <button type="button">Save</button></main></body></html>`;

let root: string;
let parquet: Buffer;
let site: StaticHost;
let data: StaticHost;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'geoshelf-smoke-'));
  await mkdir(join(root, 'site', 'docs'), { recursive: true });
  await mkdir(join(root, 'data'));
  await writeFile(join(root, 'site', 'index.html'), PAGE);
  await writeFile(join(root, 'site', 'docs', 'index.html'), PAGE.replaceAll('Smoke', 'Docs'));
  for (const name of ['app.js', 'site.json', 'engine.wasm', 'land.geojson']) await writeFile(join(root, 'site', name), '{}');
  await copyFile(PARQUET, join(root, 'data', 'capitals.parquet'));
  parquet = await readFile(PARQUET);
  site = await serveStatic({ mounts: [{ prefix: '/', dir: join(root, 'site') }] });
  data = await serveStatic({ mounts: [{ prefix: '/data', dir: join(root, 'data') }] });
});

afterAll(async () => {
  await Promise.all([site?.close(), data?.close()]);
  await rm(root, { recursive: true, force: true });
});

describe('the static host', () => {
  test('answers a range of a parquet file with 206 and exactly those bytes', async () => {
    const response = await fetch(`${data.origin}/data/capitals.parquet`, { headers: { Range: 'bytes=4-99' } });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes 4-99/${parquet.length}`);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(parquet.subarray(4, 100));
  });

  test.each([
    ['bytes=-8', parquet => [parquet.length - 8, parquet.length - 1]],
    ['bytes=0-0', () => [0, 0]],
    ['bytes=100-', parquet => [100, parquet.length - 1]],
  ] as [string, (parquet: Buffer) => [number, number]][])('answers %s with the bytes it names', async (range, expected) => {
    const [start, end] = expected(parquet);
    const response = await fetch(`${data.origin}/data/capitals.parquet`, { headers: { Range: range } });
    expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/${parquet.length}`);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(parquet.subarray(start, end + 1));
  });

  test('refuses a range past the end of the file with 416', async () => {
    const response = await fetch(`${data.origin}/data/capitals.parquet`, { headers: { Range: `bytes=${parquet.length}-` } });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe(`bytes */${parquet.length}`);
  });

  test('serves a directory its index.html and sends the slashless path to the directory', async () => {
    expect(await (await fetch(`${site.origin}/docs/`)).text()).toContain('<h1>Docs</h1>');
    const redirect = await fetch(`${site.origin}/docs`, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([301, '/docs/']);
  });

  test.each([
    ['/app.js', 'text/javascript; charset=utf-8'],
    ['/site.json', 'application/json'],
    ['/engine.wasm', 'application/wasm'],
    ['/land.geojson', 'application/geo+json'],
    ['/data/capitals.parquet', 'application/vnd.apache.parquet'],
  ])('labels %s as %s', async (path, type) => {
    const host = path.startsWith('/data/') ? data : site;
    const response = await fetch(`${host.origin}${path}`);
    expect(response.headers.get('content-type')).toBe(type);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe.skipIf(browserUnavailable)('the browser', { timeout: 60_000 }, () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
  });

  test('draws with WebGL2 through SwiftShader', async () => {
    const drawn = await page.evaluate(() => {
      const gl = document.createElement('canvas').getContext('webgl2');
      const info = gl?.getExtension('WEBGL_debug_renderer_info');
      if (!gl || !info) return null;
      gl.clearColor(0, 0.5, 1, 1);
      gl.clear(gl.COLOR_BUFFER_BIT);
      const pixel = new Uint8Array(4);
      gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
      return { renderer: String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)), pixel: [...pixel] };
    });
    expect(drawn?.renderer).toContain('SwiftShader');
    expect(drawn?.pixel).toEqual([0, 128, 255, 255]);
  });

  test('reads a byte range and its Content-Range from a second origin', async () => {
    const requests = recordRequests(page);
    const errors = collectPageErrors(page);
    await page.goto(`${site.origin}/`);
    const read = await page.evaluate(async (url) => {
      const response = await fetch(url, { headers: { Range: 'bytes=-8' } });
      const bytes = new Uint8Array(await response.arrayBuffer());
      return { status: response.status, contentRange: response.headers.get('Content-Range'), magic: String.fromCharCode(...bytes.slice(4)) };
    }, `${data.origin}/data/capitals.parquet`);
    expect(read).toEqual({ status: 206, contentRange: `bytes ${parquet.length - 8}-${parquet.length - 1}/${parquet.length}`, magic: 'PAR1' });
    const log = await requests.settle();
    expect(log.find(({ url }) => url.endsWith('.parquet'))).toMatchObject({ range: 'bytes=-8', status: 206, bytes: 8 });
    expect(findForeignRequests(log, [site.origin, data.origin])).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('cannot read a second origin that sends no CORS headers', async () => {
    const bare: Server = createServer((_, res) => res.end('secret'));
    await new Promise<void>((done) => bare.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;
    await page.goto(`${site.origin}/`);
    const outcome = await page.evaluate((url) => fetch(url).then((r) => r.text(), () => 'blocked'), url);
    bare.close();
    expect(outcome).toBe('blocked');
  });

  test('axe finds the image without alt and the button without a name on a bad page', async () => {
    await page.setContent(BAD_PAGE);
    const ids = (await findSeriousViolations(page)).map(({ id }) => id);
    expect(ids).toEqual(expect.arrayContaining(['image-alt', 'button-name']));
  });

  test('axe finds nothing serious on a good page', async () => {
    await page.setContent(GOOD_PAGE);
    expect(await findSeriousViolations(page)).toEqual([]);
  });
});
