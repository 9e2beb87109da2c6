import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parseFeed } from '@rowanmanning/feed-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createGeoMetadata, createGeoParquetCopyOptions } from '../core/geo/geoparquet.ts';
import { quoteLiteral } from '../core/sql.ts';
import { buildCatalog } from '../generator/build.ts';
import { readModel } from '../runtime/model-file.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import type { VersionChanges } from '../schemas/version-changes.ts';
import { makeTempCatalog, ROOT } from './helpers/catalog.ts';
import { get, sampleConfig, sampleServer } from './helpers/sample.ts';

const MEGACITIES = join(ROOT, 'catalog-data/data/geonames/megacities/3.1.0/megacities.parquet');

describe('the Atom feeds of the sample', () => {
  const server = sampleServer();
  afterAll(() => server.close());
  const { model } = readModel(sampleConfig().distDir).file;

  it('parse as Atom, list every dataset of the catalog, and link pages that answer', async () => {
    const response = await get(server, '/feed.atom');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/atom+xml');
    const feed = parseFeed(await response.text());
    expect(feed.meta.type).toBe('atom');
    expect(feed.self).toBe(`${sampleConfig().baseUrl}/feed.atom`);
    const links = new Set(feed.items.map((item) => item.url));
    for (const collection of model.collections) {
      for (const dataset of collection.datasets) expect(links, dataset.slug).toContain(`${sampleConfig().baseUrl}/collections/${collection.slug}/datasets/${dataset.slug}/`);
    }
    for (const link of links) expect((await get(server, new URL(link!).pathname)).status, link!).toBe(200);
    const dates = feed.items.map((item) => item.updated!.getTime());
    expect(dates).toEqual([...dates].sort((a, b) => b - a));
  });

  it('give each collection a feed of its own, linked from its page', async () => {
    const page = await (await get(server, '/collections/geonames/')).text();
    expect(page).toContain('<link rel="alternate" type="application/atom+xml" href="/collections/geonames/feed.atom"');
    const feed = parseFeed(await (await get(server, '/collections/geonames/feed.atom')).text());
    expect(feed.items.every((item) => item.url!.includes('/collections/geonames/'))).toBe(true);
    expect(feed.items.filter((item) => !item.url!.includes('/files/'))).toHaveLength(model.collections.find((collection) => collection.slug === 'geonames')!.datasets.length);
  });

  it('tell what the second version of the sample countries changed', async () => {
    const feed = parseFeed(await (await get(server, '/collections/natural-earth/feed.atom')).text());
    const entry = feed.items.find((item) => item.title === 'Admin-0 countries: Countries, 1:110 million, version 2.0.2')!;
    expect(entry.description).toMatch(/^Version 2\.0\.2 against 1\.1\.4: columns removed: adm0_a3, /);
  });
});

describe('a new version of a file', () => {
  let server: GeoshelfServer;
  const record = (sources: string) => [
    'slug: big-cities', 'collection: maps', 'name: Big cities', 'files:', '  - slug: cities', '    name: Cities', '    formats:',
    '      - format: geoparquet', '        sources:', sources, '',
  ].join('\n');
  const source = (version: string) => `          - version: "${version}"\n            path: cities/${version}/cities.parquet`;

  beforeAll(async () => {
    const { config, dataDir } = await makeTempCatalog({
      'formats.yaml': await readFile(join(ROOT, 'catalog-data/formats.yaml'), 'utf8'),
      'datasets/big-cities.yaml': record(source('1')),
    }, { 'cities/1/cities.parquet': MEGACITIES });
    await buildCatalog({ config });
    // Version 2: the cities over 5 million, alt_country dropped, population as DOUBLE, and a rank column added.
    const connection = await (await DuckDBInstance.create(':memory:')).connect();
    const out = join(dataDir, 'cities/2/cities.parquet');
    await mkdir(join(dataDir, 'cities/2'), { recursive: true });
    const bounds = (await connection.runAndReadAll(`SELECT min(bbox.xmin), min(bbox.ymin), max(bbox.xmax), max(bbox.ymax) FROM read_parquet(${quoteLiteral(MEGACITIES)}) WHERE population >= 5000000`)).getRows()[0]!.map(Number) as [number, number, number, number];
    await connection.run(`COPY (SELECT * EXCLUDE (alt_country, population, geometry, bbox), population::DOUBLE AS population, row_number() OVER (ORDER BY population DESC)::INTEGER AS rank, geometry, bbox FROM read_parquet(${quoteLiteral(MEGACITIES)}) WHERE population >= 5000000 ORDER BY city_id) TO ${quoteLiteral(out)} (${createGeoParquetCopyOptions(createGeoMetadata(['Point'], bounds))})`);
    connection.closeSync();
    await writeFile(join(config.catalogDir, 'datasets/big-cities.yaml'), record(`${source('2')}\n${source('1')}`));
    await buildCatalog({ config });
    server = createServer({ config, serveData: true });
  }, 180_000);
  afterAll(() => server?.close());

  it('shows the diff in the API: columns added, removed and retyped, rows, bounds and moved statistics', async () => {
    const body = (await (await get(server, '/api/collections/maps/datasets/big-cities/files/cities')).json()) as { version_changes: VersionChanges[] };
    expect(body.version_changes).toHaveLength(1);
    const [change] = body.version_changes;
    expect(change!.version).toBe('2');
    expect(change!.previous).toBe('1');
    expect(change!.columns.added).toEqual([{ name: 'rank', type: 'integer' }]);
    expect(change!.columns.removed).toEqual([{ name: 'alt_country', type: 'string' }]);
    expect(change!.columns.retyped).toEqual([{ name: 'population', from: 'integer', to: 'float' }]);
    expect(change!.row_count!.from).toBe(363);
    expect(change!.row_count!.to).toBeLessThan(100);
    expect(change!.bounds).not.toBeNull();
    expect(change!.statistics).toContainEqual(expect.objectContaining({ column: 'city_id', statistic: 'num_unique_values', from: 363 }));
  });

  it('shows the diff on the file page, with a CITATION.cff for each version', async () => {
    const page = await (await get(server, '/collections/maps/datasets/big-cities/files/cities/')).text();
    expect(page).toContain('<h2 id="changes">What changed</h2>');
    expect(page).toContain('Columns added: rank (integer)');
    expect(page).toContain('Column population: integer → float');
    const citations = [...page.matchAll(/<pre><code>([\s\S]*?)<\/code><\/pre>/g)].map((match) => parseYaml(match[1]!.replaceAll('&quot;', '"').replaceAll('&amp;', '&')) as Record<string, unknown>);
    expect(citations.map((citation) => citation.version)).toEqual(['2', '1']);
    expect(citations[0]).toMatchObject({ 'cff-version': '1.2.0', type: 'dataset', title: 'Big cities: Cities', url: 'https://catalog.example.org/collections/maps/datasets/big-cities/files/cities/' });
  });
});
