import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateXML, memoryPages } from 'xmllint-wasm';
import type { CollectionModel, DatasetModel } from '../core/model.ts';
import { collectionPath, datasetPath, filePath, SITE_PATHS } from '../core/site/paths.ts';
import { DEFAULT_LIST_LIMIT } from '../core/constants.ts';
import { buildCatalog } from '../generator/build.ts';
import { renderCollectionSitemaps, SITEMAP_MAX_URLS } from '../generator/emit/site/sitemaps.ts';
import { readManifestRoot } from '../runtime/manifest.ts';
import { readModel } from '../runtime/model-file.ts';
import { makeTestConfig, ROOT } from './helpers/catalog.ts';
import { get, sampleConfig, sampleServer } from './helpers/sample.ts';

const server = sampleServer();
afterAll(() => server.close());

/** The official urlset schema, as the `sitemap` package ships it, and the index schema written from the protocol. */
const URLSET_XSD = { fileName: 'sitemap.xsd', contents: await readFile(join(ROOT, 'node_modules/sitemap/schema/sitemap.xsd'), 'utf8') };
const INDEX_XSD = { fileName: 'siteindex.xsd', contents: await readFile(join(ROOT, 'tests/fixtures/sitemap/siteindex.xsd'), 'utf8') };

/** xmllint's verdict on a sitemap: the index schema for a `<sitemapindex>`, the official one for a `<urlset>`. */
async function validateSitemap(xml: string): Promise<{ valid: boolean; errors: string[] }> {
  const schema = xml.includes('<sitemapindex') ? INDEX_XSD : URLSET_XSD;
  const result = await validateXML({ xml: { fileName: 'candidate.xml', contents: xml }, schema, maxMemoryPages: 256 * memoryPages.MiB });
  return { valid: result.valid, errors: result.errors.map((error) => error.message) };
}

/** The text of every `<loc>`, unescaped. */
function listLocs(xml: string): string[] {
  return [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((match) => match[1]!.replace(/&apos;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
}

/** The sample's sitemap index and each of its children, read through the server. */
async function readSampleSitemaps(): Promise<{ index: string; children: Map<string, string> }> {
  const base = sampleConfig().baseUrl;
  const index = await (await get(server, '/sitemap.xml')).text();
  const children = new Map<string, string>();
  for (const loc of listLocs(index)) children.set(loc, await (await get(server, loc.slice(base.length))).text());
  return { index, children };
}

describe('sitemap.xml and robots.txt', () => {
  it('/sitemap.xml is an index whose children list every listing, dataset and file page under the base URL, and every one answers 200', async () => {
    const base = sampleConfig().baseUrl;
    const { index, children } = await readSampleSitemaps();
    expect(index).toContain('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    expect(children.size).toBeGreaterThan(1);
    const locs = [...children.values()].flatMap(listLocs);
    const { model } = readModel(sampleConfig().distDir).file;
    const expected = [`${base}${SITE_PATHS.home}`, `${base}${SITE_PATHS.developers}`];
    for (const collection of model.collections) {
      const pages = Math.max(1, Math.ceil(collection.datasets.length / DEFAULT_LIST_LIMIT));
      for (let page = 1; page <= pages; page += 1) expected.push(`${base}${collectionPath(collection.slug, page)}`);
      for (const dataset of collection.datasets) {
        expected.push(`${base}${datasetPath(collection.slug, dataset.slug)}`);
        for (const file of dataset.files) expected.push(`${base}${filePath(collection.slug, dataset.slug, file.slug)}`);
      }
    }
    expect([...locs].sort()).toEqual([...expected].sort());
    for (const loc of locs) {
      expect(loc.startsWith(`${base}/`), loc).toBe(true);
      const response = await get(server, loc.slice(base.length));
      expect(response.status, loc).toBe(200);
      expect(response.headers.get('content-type'), loc).toMatch(/^text\/html/);
      // A page worth listing is a page worth indexing.
      expect(await response.text(), loc).not.toContain('content="noindex"');
    }
    for (const path of ['/sitemap.xml', ...[...children.keys()].map((loc) => loc.slice(base.length))]) {
      const response = await get(server, path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toBe('application/xml');
    }
    const robots = await get(server, '/robots.txt');
    expect(robots.status).toBe(200);
    expect(robots.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });

  it('every sitemap of the sample is valid against the sitemap XSDs, and the validator rejects a url without loc and a bad lastmod', async () => {
    const { index, children } = await readSampleSitemaps();
    expect(await validateSitemap(index)).toEqual({ valid: true, errors: [] });
    for (const [loc, xml] of children) expect(await validateSitemap(xml), loc).toEqual({ valid: true, errors: [] });
    // Timestamps are written as W3C datetimes in UTC.
    expect(index).toMatch(/<lastmod>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z<\/lastmod>/);
    const anyChild = [...children.values()].find((xml) => xml.includes('<lastmod>'))!;
    expect((await validateSitemap(anyChild.replace(/<loc>[^<]*<\/loc>/, ''))).valid).toBe(false);
    expect((await validateSitemap(anyChild.replace(/<lastmod>[^<]*<\/lastmod>/, '<lastmod>2024-05-01 10:00</lastmod>'))).valid).toBe(false);
    expect((await validateSitemap(index.replace(/<lastmod>[^<]*<\/lastmod>/, '<lastmod>yesterday</lastmod>'))).valid).toBe(false);
    expect((await validateSitemap(index.replace(/<loc>[^<]*<\/loc>/, ''))).valid).toBe(false);
  });

  it('escapes every loc: a base URL with XML characters gives a valid sitemap whose locs read back as written', async () => {
    const base = "https://example.org/a&b'c";
    const [child] = renderCollectionSitemaps(base, makeCollection('maps', 1, 1));
    const xml = new TextDecoder().decode(child!.body);
    expect(xml).toContain('https://example.org/a&amp;b&apos;c/collections/maps/');
    expect(await validateSitemap(xml)).toEqual({ valid: true, errors: [] });
    expect(listLocs(xml)[0]).toBe(`${base}/collections/maps/`);
  });

  it('splits a collection of more than 50,000 pages into numbered children, the first with 50,000 URLs, both valid', async () => {
    // 500 listing pages, 25,000 dataset pages and 25,000 file pages.
    const collection = makeCollection('big', 25_000, 1);
    const children = renderCollectionSitemaps('https://example.org', collection);
    expect(children.map((child) => child.key)).toEqual(['sitemap-collection-big.xml', 'sitemap-collection-big_2.xml']);
    const [first, second] = children.map((child) => new TextDecoder().decode(child.body));
    expect(listLocs(first!)).toHaveLength(SITEMAP_MAX_URLS);
    expect(listLocs(second!)).toHaveLength(500);
    expect(listLocs(first!).slice(0, 2)).toEqual(['https://example.org/collections/big/', 'https://example.org/collections/big/page/2/']);
    expect(listLocs(first!)).toContain('https://example.org/collections/big/page/500/');
    expect(listLocs(second!).at(-1)).toBe('https://example.org/collections/big/datasets/d-25000/files/f-1/');
    for (const xml of [first!, second!]) expect(await validateSitemap(xml)).toEqual({ valid: true, errors: [] });
  });

  it('an edit of one dataset rewrites its collection\'s sitemap and the index, and leaves the other collections\' sitemaps alone', async () => {
    const config = await makeTestConfig();
    try {
      await buildCatalog({ config });
      const before = (await readManifestRoot(config.distDir))!;
      const record = join(config.catalogDir, 'datasets/natural-earth/land.yaml');
      const text = await readFile(record, 'utf8');
      await writeFile(record, text.replace(/^description: >-\n/m, 'updated_at: "2030-01-02T03:04:05"\ndescription: >-\n  Edited for the sitemap.\n'));
      const second = await buildCatalog({ config });
      expect(second.mode).toBe('incremental');
      expect(second.written).toEqual(expect.arrayContaining(['sitemap-collection-natural-earth.xml', 'sitemap.xml']));
      expect(second.written).not.toContain('sitemap-collection-geonames.xml');
      expect(second.written).not.toContain('sitemap-collection-us-census.xml');
      // Not even rendered: the other collections' scopes kept their files.
      const after = (await readManifestRoot(config.distDir))!;
      expect(after.parts['collection-geonames']).toEqual(before.parts['collection-geonames']);
      expect(after.parts['collection-us-census']).toEqual(before.parts['collection-us-census']);
      const child = await readFile(join(config.distDir, 'sitemap-collection-natural-earth.xml'), 'utf8');
      expect(child).toContain(`<url><loc>${config.baseUrl}/collections/natural-earth/datasets/land/</loc><lastmod>2030-01-02T03:04:05Z</lastmod></url>`);
      const index = await readFile(join(config.distDir, 'sitemap.xml'), 'utf8');
      expect(index).toContain(`<sitemap><loc>${config.baseUrl}/sitemap-collection-natural-earth.xml</loc><lastmod>2030-01-02T03:04:05Z</lastmod></sitemap>`);
    } finally {
      await rm(config.root, { recursive: true, force: true });
    }
  });

  it('robots.txt allows every path and names the absolute URL of the sitemap index', async () => {
    const text = await (await get(server, '/robots.txt')).text();
    expect(text).toMatch(/^User-agent: \*$/m);
    expect(text).toMatch(/^Allow: \/$/m);
    expect(text).not.toMatch(/^Disallow: \S/m);
    expect(text).toMatch(new RegExp(`^Sitemap: ${sampleConfig().baseUrl.replaceAll('.', '\\.')}/sitemap\\.xml$`, 'm'));
  });
});

const TIMESTAMP = '2024-05-01T10:00:00';

/** A collection of `datasets` datasets (`d-1`, …), each with `files` files (`f-1`, …): plain objects, as the model holds them. */
function makeCollection(slug: string, datasets: number, files: number): CollectionModel {
  const makeDataset = (number: number): DatasetModel => ({
    id: number, slug: `d-${number}`, name: `Dataset ${number}`, collection_id: 1, tags: {}, created_at: TIMESTAMP, updated_at: TIMESTAMP,
    files: Array.from({ length: files }, (_, at) => ({
      id: number * files + at, dataset_id: number, slug: `f-${at + 1}`, name: `File ${at + 1}`, description: null, layer_name: null, source_file_path: null,
      created_at: TIMESTAMP, updated_at: TIMESTAMP, column_descriptions: {}, formats: [],
    })),
  });
  return { id: 1, slug, name: slug, created_at: TIMESTAMP, updated_at: TIMESTAMP, datasets: Array.from({ length: datasets }, (_, at) => makeDataset(at + 1)) };
}
