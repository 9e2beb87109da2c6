import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { findSeriousViolations } from './helpers/axe.ts';
import { browserUnavailable, collectPageErrors, launchBrowser, recordRequests } from './helpers/browser.ts';
import { ROOT } from './helpers/catalog.ts';
import { startGeoshelf, type RunningSite } from './helpers/web-app.ts';
import { readManifest } from '../runtime/manifest.ts';

const FILE_PAGE = '/collections/us-census/datasets/us-boundaries/files/states/';

describe.skipIf(browserUnavailable)('the web app served by geoshelf', () => {
  let site: RunningSite;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    [site, browser] = await Promise.all([startGeoshelf(), launchBrowser()]);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    errors = collectPageErrors(page);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it('leads from the home page through a collection and a dataset to a file and its data dictionary', async () => {
    await page.goto(`${site.origin}/`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Geospatial datasets');
    await page.getByRole('link', { name: 'US Census boundaries and places' }).first().click();
    await page.waitForURL(/\/collections\/us-census\/$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('US Census boundaries and places');
    await page.getByRole('link', { name: 'US states, counties and nation' }).click();
    await page.waitForURL(/\/datasets\/us-boundaries\/$/);
    await expect(page.getByRole('table', { name: /Versions and downloads of States/ })).toBeTruthy();
    await page.getByRole('link', { name: 'States, DC and territories' }).first().click();
    await page.waitForURL(new RegExp(`${FILE_PAGE}$`));
    const schema = JSON.parse(await (await fetch(`${site.origin}/api${FILE_PAGE.slice(0, -1)}/schema`)).text());
    const rows = page.locator('table.dictionary tbody tr');
    await expect(rows.count()).resolves.toBe(schema.schema.columns.length);
    await expect(rows.first().locator('th').textContent()).resolves.toBe(schema.schema.columns[0].name);
    await expect(page.locator('.facts').textContent()).resolves.toContain('MultiPolygon');
    expect(errors).toEqual([]);
  });

  it.each([
    ['/', '/api/collections'],
    ['/collections/geonames/', '/api/collections/geonames'],
    ['/collections/geonames/datasets/cities/', '/api/collections/geonames/datasets/cities'],
    [FILE_PAGE, `/api${FILE_PAGE.slice(0, -1)}`],
  ])('%s links its JSON document, and that document answers', async (path, json) => {
    const response = await fetch(`${site.origin}${path}`);
    const html = await response.text();
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html).toContain(`<link rel="alternate" type="application/json" href="${json}">`);
    expect((await fetch(`${site.origin}${json}`)).status).toBe(200);
  });

  it('answers an unknown page with 404 and a page that leads back', async () => {
    const response = await page.goto(`${site.origin}/collections/no-such-thing/`);
    expect(response?.status()).toBe(404);
    await expect(page.locator('h1').textContent()).resolves.toBe('Page not found');
  });

  it.each([
    ['home', '/'],
    ['collection', '/collections/geonames/'],
    ['tag listing', '/collections/natural-earth/tags/categories/land/'],
    ['dataset', '/collections/geonames/datasets/cities/'],
    ['file', FILE_PAGE],
    ['search', '/search/?q=cities'],
    ['console', '/console/'],
    ['API', '/developers/'],
    ['not found', '/nowhere/'],
  ])('the %s page has no serious or critical accessibility violation', async (_name, path) => {
    await page.goto(`${site.origin}${path}`);
    await page.waitForLoadState('networkidle');
    expect(await findSeriousViolations(page)).toEqual([]);
  });

  it('keeps a dataset page under 60 KB compressed on first load: HTML, CSS and scripts', async () => {
    const manifest = (await readManifest(site.distDir))!;
    const key = 'collections/geonames/datasets/cities/index.html';
    const html = await readFile(join(site.distDir, key), 'utf8');
    const linked = [...html.matchAll(/(?:href|src)="\/(_site\/[^"]+\.(?:css|js))"/g)].map((match) => match[1]!);
    const bytes = [key, ...linked].reduce((sum, file) => sum + (manifest.files[file]!.br ?? manifest.files[file]!.bytes), 0);
    expect(bytes).toBeLessThanOrEqual(60_000);
    expect(linked.some((file) => /maplibre|parquet|duckdb/i.test(file))).toBe(false);
  });

  it('reads well on a phone: nothing wider than the screen but scrollable tables', async () => {
    const phone = await browser.newPage({ viewport: { width: 375, height: 740 }, isMobile: true });
    // A dataset page with providers and a citation; the countries file has two versions, with what changed and a citation for each.
    for (const path of ['/', '/collections/geonames/', FILE_PAGE, '/collections/geonames/datasets/cities/', '/collections/natural-earth/datasets/countries/files/countries-110m/']) {
      await phone.goto(`${site.origin}${path}`);
      expect(await phone.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(375);
    }
    await phone.close();
  });

  it('saves screenshots of the main pages (test-results/screenshots, copied into docs/ for the README)', async () => {
    const folder = join(ROOT, 'test-results', 'screenshots');
    await mkdir(folder, { recursive: true });
    for (const [name, path] of [['home', '/'], ['dataset', '/collections/geonames/datasets/cities/'], ['file', FILE_PAGE], ['search', '/search/?q=capital']] as const) {
      await page.goto(`${site.origin}${path}`);
      await page.waitForLoadState('networkidle');
      const shot = await page.screenshot({ path: join(folder, `${name}.png`) });
      expect(shot.length).toBeGreaterThan(10_000);
    }
  });

  describe('the SQL console', () => {
    const SQL = 'SELECT name, population, geometry FROM c WHERE population > 0 ORDER BY population DESC, city_id';
    const link = (sql: string) => `/console/?source=c:geonames/cities/cities-1000&sql=${encodeURIComponent(sql)}`;
    const run = async (console: Page) => {
      await console.getByRole('button', { name: 'Run', exact: true }).click();
      await console.locator('[data-console][data-state="done"], [data-console][data-state="error"]').waitFor({ timeout: 30_000 });
    };
    const firstCell = (console: Page) => console.locator('[data-table] tbody tr').first().locator('td').first().textContent();

    it('runs a shared query, pages forward and back, and maps the result from its tiles', async () => {
      const console = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await console.goto(`${site.origin}${link(SQL)}`);
      await run(console);
      await expect(console.locator('[data-console]').getAttribute('data-state')).resolves.toBe('done');
      await expect(console.locator('[data-table] tbody tr').count()).resolves.toBe(100);
      await expect(console.locator('[data-table] thead').textContent()).resolves.toMatch(/population[\s\S]*integer/);
      const top = await firstCell(console);
      expect(top).toBe('Shanghai');
      // A page re-runs the query: on a loaded machine that takes seconds, not expect.poll's default second.
      await console.locator('[data-next]').click();
      await expect.poll(() => firstCell(console), { timeout: 30_000 }).not.toBe(top);
      await console.locator('[data-prev]').click();
      await expect.poll(() => firstCell(console), { timeout: 30_000 }).toBe(top);
      const map = console.locator('[data-map]');
      await expect.poll(async () => Number(await map.getAttribute('data-rendered-features')), { timeout: 30_000 }).toBeGreaterThan(0);
      await console.screenshot({ path: join(ROOT, 'test-results', 'screenshots', 'console.png'), fullPage: true });
      await console.close();
    });

    it('shows a shared query in a plain text box at once, and loads CodeMirror only when a person comes to the editor', async () => {
      const console = await browser.newPage();
      const log = recordRequests(console);
      await console.goto(`${site.origin}${link('SELECT count(*) AS n FROM c')}`);
      await console.waitForLoadState('networkidle');
      await expect(console.locator('[data-sql]').inputValue()).resolves.toBe('SELECT count(*) AS n FROM c');
      expect(log.requests.filter((request) => /codemirror/i.test(request.url))).toEqual([]);
      await console.locator('[data-sql]').focus();
      await console.locator('.cm-editor').waitFor({ timeout: 30_000 });
      await expect(console.locator('.cm-content').textContent()).resolves.toBe('SELECT count(*) AS n FROM c');
      await expect.poll(() => console.evaluate(() => document.activeElement?.closest('.cm-editor') !== null)).toBe(true);
      await console.close();
    });

    it('says what is wrong with bad SQL, and where', async () => {
      const console = await browser.newPage();
      await console.goto(`${site.origin}${link('SELECT nme FROM c')}`);
      await run(console);
      await expect(console.locator('[data-console]').getAttribute('data-state')).resolves.toBe('error');
      await expect(console.locator('[data-error]').textContent()).resolves.toMatch(/nme/);
      await console.close();
    });

    it('runs over the sources of its link when Run is pressed before they are restored', async () => {
      const console = await browser.newPage();
      // The dataset's query sources come a second late, as on a slow connection; Run is pressed meanwhile.
      await console.route('**/query-sources.json', async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await route.continue();
      });
      await console.goto(`${site.origin}${link('SELECT nme FROM c')}`);
      await run(console);
      await expect(console.locator('[data-console]').getAttribute('data-state')).resolves.toBe('error');
      await expect(console.locator('[data-error]').textContent()).resolves.toMatch(/nme/);
      await console.close();
    });

    it('finds a dataset by the starts of its words through the search index, and offers its files once picked with the keyboard', async () => {
      const console = await browser.newPage();
      const log = recordRequests(console);
      await console.goto(`${site.origin}/console/`);
      const input = console.getByRole('combobox', { name: 'Dataset' });
      await input.fill('nat cap');
      const options = console.getByRole('listbox', { name: 'Datasets' }).getByRole('option');
      await expect.poll(() => options.first().textContent(), { timeout: 30_000 }).toContain('National capitals');
      await expect(console.locator('[data-dataset-status]').textContent()).resolves.toMatch(/datasets? match/);
      // The picker asks the full-text index, never for a list of every dataset.
      expect(log.requests.some((request) => request.url.includes('/_site/search/meta.json'))).toBe(true);
      expect(log.requests.some((request) => request.url.includes('/_site/datasets.json'))).toBe(false);
      await input.press('ArrowDown');
      await expect(input.getAttribute('aria-activedescendant')).resolves.toBe('console-dataset-option-0');
      await input.press('Enter');
      await expect(input.inputValue()).resolves.toBe('National capitals');
      await expect.poll(() => console.locator('[data-file]').isEnabled(), { timeout: 30_000 }).toBe(true);
      await expect(console.locator('[data-file] option').count()).resolves.toBeGreaterThan(0);
      await input.fill('n');
      await expect.poll(() => console.locator('[data-dataset-status]').textContent(), { timeout: 30_000 }).toBe('Type two letters or more.');
      await input.fill('zzqx');
      await expect.poll(() => console.locator('[data-dataset-status]').textContent(), { timeout: 30_000 }).toBe('No dataset matches.');
      await expect(console.getByRole('listbox', { name: 'Datasets' }).isHidden()).resolves.toBe(true);
      await console.close();
    });

    it('restores the same sources and SQL from its link after a reload', async () => {
      const console = await browser.newPage();
      await console.goto(`${site.origin}${link('SELECT count(*) AS n FROM c')}`);
      await run(console);
      const url = console.url();
      await console.reload();
      expect(console.url()).toBe(url);
      await expect(console.locator('[data-sql]').inputValue()).resolves.toBe('SELECT count(*) AS n FROM c');
      await expect(console.locator('[data-source-list]').textContent()).resolves.toContain('c');
      await run(console);
      await expect(firstCell(console)).resolves.toMatch(/^135,?233$/);
      await console.close();
    });
  });
});
