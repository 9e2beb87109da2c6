import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserUnavailable, collectPageErrors, findForeignRequests, launchBrowser, recordRequests } from './helpers/browser.ts';
import { startStaticSite, type RunningSite } from './helpers/web-app.ts';

const CITIES = '/collections/geonames/datasets/cities/files/cities-1000/';

describe.skipIf(browserUnavailable)('the web app on a plain static file server, with no geoshelf server running', () => {
  let site: RunningSite;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    [site, browser] = await Promise.all([startStaticSite(), launchBrowser()]);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  const open = async (path: string) => {
    page = await browser.newPage();
    errors = collectPageErrors(page);
    const log = recordRequests(page);
    await page.goto(`${site.origin}${path}`);
    return log;
  };

  it('browses from the home page to a dataset', async () => {
    await open('/');
    await page.getByRole('link', { name: 'GeoNames populated places' }).first().click();
    await page.getByRole('link', { name: 'Cities and towns of the world' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Cities and towns of the world');
    await page.close();
  });

  it.each([
    ['a column name', 'feature_code', 'Cities and towns of the world'],
    ['a word of a description', 'antimeridian', 'Land polygons'],
  ])('finds a dataset by %s', async (_what, words, title) => {
    const log = await open(`/search/?q=${words}`);
    const result = page.locator('[data-search-results] a', { hasText: title });
    await result.first().waitFor({ timeout: 15_000 });
    expect(findForeignRequests(await log.settle(), [site.origin])).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows the first 100 rows of a 135,233-row file before any map code loads, reading byte ranges only', async () => {
    const log = await open(CITIES);
    const rows = page.locator('.preview-table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(100);
    // The rows never wait for the map: nothing of MapLibre or pmtiles was asked for.
    expect(log.requests.filter((request) => /maplibre|pmtiles/.test(request.url))).toEqual([]);
    const requests = await log.settle();
    const parquet = requests.filter((request) => request.url.endsWith('.parquet'));
    expect(parquet.length).toBeGreaterThan(0);
    expect(parquet.every((request) => request.status === 206)).toBe(true);
    const fileBytes = (await fetch(`${site.origin}/data/geonames/cities/3.1.0/cities-1000.parquet`, { method: 'HEAD' })).headers.get('content-length');
    expect(parquet.reduce((sum, request) => sum + (request.bytes ?? 0), 0)).toBeLessThan(Number(fileBytes) / 4);
    expect(findForeignRequests(requests, [site.origin])).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows the build\'s picture of the file, with its features, where the map will be', async () => {
    await open(CITIES);
    const picture = page.locator('.preview-map img');
    await expect.poll(() => picture.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth), { timeout: 20_000 }).toBeGreaterThan(0);
    await expect(picture.getAttribute('alt')).resolves.toMatch(/^Map of .+: its features/);
    const response = await fetch(new URL((await picture.getAttribute('src'))!, site.origin));
    expect(response.headers.get('content-type')).toBe('image/svg+xml');
    // The points of the PMTiles twin, in the live map's data colour.
    expect((await response.text()).match(/stroke="#a3165f"[^>]*stroke-linecap="round"/)).not.toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('draws every feature of the file from its PMTiles archive once asked, reading byte ranges and asking no query service', async () => {
    const log = await open(CITIES);
    const map = page.locator('.preview-map');
    await page.getByRole('button', { name: 'Explore the map' }).click();
    await expect.poll(() => map.getAttribute('data-archive'), { timeout: 20_000 }).toBe('drawn');
    // More than the 100 rows the table previews: the world view of the archive, thinned where cities crowd.
    await expect.poll(async () => Number(await map.getAttribute('data-rendered-features')), { timeout: 20_000 }).toBeGreaterThan(100);
    await expect(page.locator('.preview-map-note a').getAttribute('href')).resolves.toMatch(/\/data\/geonames\/cities\/3\.1\.0\/cities-1000\.pmtiles$/);
    // A near-global layer shows the world once, at least as wide as the map, not three small copies side by side.
    const width = await map.evaluate((element) => element.querySelector('canvas')!.clientWidth);
    expect(512 * 2 ** Number(await map.getAttribute('data-zoom'))).toBeGreaterThanOrEqual(width - 1);
    const requests = await log.settle();
    const archive = requests.filter((request) => request.url.endsWith('.pmtiles'));
    expect(archive.length).toBeGreaterThan(1);
    expect(archive.every((request) => request.status === 206 && request.range !== undefined)).toBe(true);
    expect(requests.filter((request) => request.url.includes('/api/queries'))).toEqual([]);
    const archiveBytes = (await fetch(`${site.origin}/data/geonames/cities/3.1.0/cities-1000.pmtiles`, { method: 'HEAD' })).headers.get('content-length');
    expect(archive.reduce((sum, request) => sum + (request.bytes ?? 0), 0)).toBeLessThan(Number(archiveBytes) / 4);
    expect(findForeignRequests(requests, [site.origin])).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('runs SQL entirely in the browser when no query service answers, and draws the result', async () => {
    const sql = 'SELECT name, population, geometry FROM c WHERE country = \'IS\' ORDER BY population DESC';
    const log = await open(`/console/?source=c:geonames/cities/cities-1000&sql=${encodeURIComponent(sql)}`);
    const console = page.locator('[data-console]');
    await expect.poll(() => page.locator('input[value="browser"]').isChecked(), { timeout: 15_000 }).toBe(true);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('[data-console][data-state="done"], [data-console][data-state="error"]').waitFor({ timeout: 60_000 });
    await expect(console.getAttribute('data-state')).resolves.toBe('done');
    await expect(page.locator('[data-table] tbody tr').first().textContent()).resolves.toContain('Reykjavík');
    const map = page.locator('[data-map]');
    await expect.poll(async () => Number(await map.getAttribute('data-rendered-features')), { timeout: 30_000 }).toBeGreaterThan(0);
    const requests = await log.settle();
    expect(findForeignRequests(requests, [site.origin])).toEqual([]);
    expect(requests.some((request) => /duckdb.*\.wasm$/.test(request.url))).toBe(true);
    await page.close();
  });
});
