import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parseFeed } from '@rowanmanning/feed-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createGeoMetadata, createGeoParquetCopyOptions } from '../core/geo/geoparquet.ts';
import { quoteLiteral } from '../core/sql.ts';
import { buildCatalog } from '../generator/build.ts';
import { BuildError } from '../generator/errors.ts';
import { createEmptyLedger, type LedgerKind } from '../generator/model/ledger.ts';
import { listRemovals } from '../generator/model/removals.ts';
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

describe('removals', () => {
  const file = (slug: string, versions: string[]) => [
    `  - slug: ${slug}`, `    name: ${slug}`, '    formats:', '      - format: geoparquet', '        sources:',
    ...versions.map((version) => `          - version: "${version}"\n            path: ${slug}/${version}/cities.parquet`),
  ].join('\n');
  const dataset = (slug: string, collection: string, files: string[]) => [`slug: ${slug}`, `collection: ${collection}`, `name: ${slug}`, 'files:', ...files, ''].join('\n');
  const at = (month: number) => new Date(Date.UTC(2026, month - 1, 1));
  let config: Awaited<ReturnType<typeof makeTempCatalog>>['config'];
  let server: GeoshelfServer;
  let ledger: () => Promise<{ ids: Record<string, Record<string, unknown[]>>; removed: Record<string, Record<string, string>> }>;
  const feed = async (path: string) => parseFeed(await (await get(server, path)).text());

  beforeAll(async () => {
    const made = await makeTempCatalog({
      'formats.yaml': await readFile(join(ROOT, 'catalog-data/formats.yaml'), 'utf8'),
      'collections/extra.yaml': 'slug: extra\nname: Extra\n',
      'datasets/big-cities.yaml': dataset('big-cities', 'maps', [file('cities', ['2', '1']), file('towns', ['1'])]),
      'datasets/small-cities.yaml': dataset('small-cities', 'maps', [file('cities', ['1'])]),
      'datasets/extra-cities.yaml': dataset('extra-cities', 'extra', [file('cities', ['1'])]),
    }, { 'cities/1/cities.parquet': MEGACITIES, 'cities/2/cities.parquet': MEGACITIES, 'towns/1/cities.parquet': MEGACITIES });
    config = made.config;
    ledger = async () => JSON.parse(await readFile(join(config.catalogDir, 'ledger.json'), 'utf8'));
    await buildCatalog({ config, now: at(1) });
    // A version, a file, a dataset and a collection with its dataset go.
    await writeFile(join(config.catalogDir, 'datasets/big-cities.yaml'), dataset('big-cities', 'maps', [file('cities', ['2'])]));
    await rm(join(config.catalogDir, 'datasets/small-cities.yaml'));
    await rm(join(config.catalogDir, 'datasets/extra-cities.yaml'));
    await rm(join(config.catalogDir, 'collections/extra.yaml'));
    await buildCatalog({ config, now: at(2) });
    server = createServer({ config, serveData: true });
  }, 180_000);
  afterAll(() => server?.close());

  it('are recorded in the ledger with the time of the build that first missed them, and ids stay taken', async () => {
    const { ids, removed } = await ledger();
    expect(removed.collection).toEqual({ extra: '2026-02-01T00:00:00' });
    expect(removed.dataset).toEqual({ 'maps/small-cities': '2026-02-01T00:00:00', 'extra/extra-cities': '2026-02-01T00:00:00' });
    expect(Object.keys(removed.file!).sort()).toEqual(['extra/extra-cities/cities', 'maps/big-cities/towns', 'maps/small-cities/cities']);
    // A version's every format: the GeoParquet file and its PMTiles twin.
    expect(Object.keys(removed.source!).filter((key) => key.startsWith('maps/big-cities/cities/')).sort()).toEqual(['maps/big-cities/cities/geoparquet@1', 'maps/big-cities/cities/pmtiles@1']);
    expect(ids.dataset!['maps/small-cities']).toEqual([expect.any(Number), '2026-01-01T00:00:00']);
  });

  it('are told by the feeds once each, linking the nearest page still there', async () => {
    const catalog = await feed('/feed.atom');
    const removed = catalog.items.filter((item) => item.title!.includes('removed'));
    expect(removed.map((item) => item.title).sort()).toEqual([
      'Collection extra removed',
      'Dataset maps/small-cities removed',
      'File maps/big-cities/towns removed',
      'maps/big-cities/cities: version 1 removed',
    ]);
    // The newest changes come first: all four were removed after everything else was added.
    expect(catalog.items.slice(0, 4)).toEqual(expect.arrayContaining(removed));
    for (const item of removed) {
      expect(item.updated!.toISOString()).toBe('2026-02-01T00:00:00.000Z');
      expect((await get(server, new URL(item.url!).pathname)).status, item.url!).toBe(200);
    }
    const links = Object.fromEntries(removed.map((item) => [item.title, new URL(item.url!).pathname]));
    expect(links).toEqual({
      'Collection extra removed': '/',
      'Dataset maps/small-cities removed': '/collections/maps/',
      'File maps/big-cities/towns removed': '/collections/maps/datasets/big-cities/',
      'maps/big-cities/cities: version 1 removed': '/collections/maps/datasets/big-cities/files/cities/',
    });
    expect(new Set(catalog.items.map((item) => item.id)).size).toBe(catalog.items.length);
    const maps = await feed('/collections/maps/feed.atom');
    expect(maps.items.filter((item) => item.title!.includes('removed')).map((item) => item.title).sort()).toEqual(removed.map((item) => item.title).filter((title) => !title!.startsWith('Collection')).sort());
  });

  it('fail a frozen build until the ledger says so, leaving the tree as it was', async () => {
    const before = await readFile(join(config.distDir, 'feed.atom'));
    // The file cities goes (a removal), and towns comes back (not one).
    await writeFile(join(config.catalogDir, 'datasets/big-cities.yaml'), dataset('big-cities', 'maps', [file('towns', ['1'])]));
    const error = await buildCatalog({ config: { ...config, ledgerMode: 'frozen' }, now: at(3) }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(BuildError);
    expect((error as BuildError).issues).toContainEqual(expect.objectContaining({ code: 'LedgerFrozen', message: expect.stringContaining('"maps/big-cities/cities" has no record any more') }));
    expect(await readFile(join(config.distDir, 'feed.atom'))).toEqual(before);
    expect((await ledger()).removed.file!['maps/big-cities/cities']).toBeUndefined();
    await writeFile(join(config.catalogDir, 'datasets/big-cities.yaml'), dataset('big-cities', 'maps', [file('cities', ['2'])]));
  });

  it('are taken back when the record returns', async () => {
    await writeFile(join(config.catalogDir, 'datasets/small-cities.yaml'), dataset('small-cities', 'maps', [file('cities', ['1'])]));
    const before = await ledger();
    await buildCatalog({ config, now: at(4) });
    const after = await ledger();
    expect(after.ids.dataset!['maps/small-cities']).toEqual(before.ids.dataset!['maps/small-cities']);
    expect(before.removed.dataset!['maps/small-cities']).toBe('2026-02-01T00:00:00');
    expect(after.removed.dataset!['maps/small-cities']).toBeUndefined();
    await server.reload();
    const titles = (await feed('/feed.atom')).items.map((item) => item.title);
    expect(titles).not.toContain('Dataset maps/small-cities removed');
    expect(titles).toContain('Collection extra removed');
  }, 120_000);
});

describe('the removals a ledger tells', () => {
  // Each key: the time it was removed, or null while its record is there.
  const ledger = (entries: Partial<Record<LedgerKind, Record<string, string | null>>>) => {
    const made = createEmptyLedger();
    for (const format of ['geoparquet', 'geojson', 'pmtiles']) made.ids.format[format] = [made.next.format++, t(1)];
    for (const [kind, keys] of Object.entries(entries) as [LedgerKind, Record<string, string | null>][]) {
      for (const [key, removed] of Object.entries(keys)) {
        made.ids[kind][key] = [made.next[kind]++, t(1)];
        if (removed) made.removed[kind][key] = removed;
      }
    }
    return made;
  };
  const t = (day: number) => `2026-03-0${day}T00:00:00`;

  it('tell a version once every format of it is gone, and not a format dropped alone', () => {
    const removals = listRemovals(ledger({
      file: { 'c/d/f': null },
      source: {
        'c/d/f/geoparquet@1': t(2), 'c/d/f/pmtiles@1': t(3),
        'c/d/f/geoparquet@2': null, 'c/d/f/geojson@2': t(2),
        'c/d/f/geoparquet@2/beta': t(4),
      },
    }));
    expect(removals).toEqual([{ kind: 'version', key: 'c/d/f@1', removed_at: t(3) }, { kind: 'version', key: 'c/d/f@2/beta', removed_at: t(4) }]);
  });

  it('tell what went with its parent once, by the parent, and what went before it on its own', () => {
    const removals = listRemovals(ledger({
      collection: { c: t(3) },
      dataset: { 'c/early': t(2), 'c/late': t(3) },
      file: { 'c/early/f': t(2), 'c/late/f': t(3) },
      source: { 'c/late/f/geoparquet@1': t(3) },
    }));
    expect(removals.map((removal) => `${removal.kind} ${removal.key} ${removal.removed_at}`)).toEqual([`dataset c/early ${t(2)}`, `collection c ${t(3)}`]);
  });
});
