import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteLiteral } from '../core/sql.ts';
import type { StacItem } from '../schemas/stac.ts';
import { readModel } from '../runtime/model-file.ts';
import { buildCatalog } from '../generator/build.ts';
import { makeTempCatalog, makeTestConfig, ROOT } from './helpers/catalog.ts';
import { get, sampleConfig, sampleManifest, sampleServer } from './helpers/sample.ts';

const server = sampleServer();
let connection: DuckDBConnection;
beforeAll(async () => {
  connection = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => {
  connection?.closeSync();
  server.close();
});

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

describe('the whole-catalog downloads', () => {
  const config = sampleConfig();
  const path = (key: string) => quoteLiteral(join(config.distDir, key));

  it('are linked from /api and the STAC root, and served as Parquet without compressed siblings', async () => {
    const root = (await (await get(server, '/api')).json()) as { links: Record<string, string> };
    expect(root.links.stac_items_parquet).toBe(`${config.baseUrl}/downloads/stac-items.parquet`);
    expect(root.links.datasets_parquet).toBe(`${config.baseUrl}/downloads/datasets.parquet`);
    const stac = (await (await get(server, '/stac')).json()) as { links: { href: string; type?: string }[] };
    expect(stac.links.find((link) => link.href === root.links.stac_items_parquet)?.type).toBe('application/vnd.apache.parquet');
    for (const key of ['downloads/stac-items.parquet', 'downloads/datasets.parquet']) {
      const response = await get(server, `/${key}`, { 'accept-encoding': 'br, gzip' });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/vnd.apache.parquet');
      expect(response.headers.get('content-encoding')).toBeNull();
      expect(sampleManifest().files[key]?.br).toBeUndefined();
    }
  });

  it('hold every latest STAC Item as stac-geoparquet: the same ids, footprints and properties as the JSON Items', async () => {
    const manifest = sampleManifest();
    const items = new Map<string, StacItem>();
    for (const [key, entry] of Object.entries(manifest.files)) {
      if (entry.type !== 'application/geo+json' || !key.startsWith('stac/') || key.includes('/versions/')) continue;
      const item = JSON.parse(await readFile(join(config.distDir, key), 'utf8')) as StacItem;
      items.set(`${item.collection} ${item.id}`, item);
    }
    const read = await rows(`SELECT collection, id, st_astext(geometry) AS wkt, bbox, datetime::VARCHAR AS datetime, "table:row_count" AS row_count, len(links) AS links, assets FROM read_parquet(${path('downloads/stac-items.parquet')})`);
    expect(read.map((row) => `${row.collection} ${row.id}`).sort()).toEqual([...items.keys()].sort());
    for (const row of read) {
      const item = items.get(`${row.collection} ${row.id}`)!;
      const [xmin, ymin, xmax, ymax] = item.bbox!;
      expect(row.bbox, String(row.id)).toEqual({ xmin, ymin, xmax, ymax });
      expect(row.wkt, String(row.id)).toMatch(/^(MULTI)?POLYGON|^POINT/);
      expect(new Date(String(row.datetime)).toISOString().replace('.000', '')).toBe(item.properties.datetime);
      expect(row.row_count === null ? undefined : Number(row.row_count)).toBe(item.properties['table:row_count']);
      expect(Number(row.links)).toBe(item.links.length);
      expect(Object.keys(row.assets as object).filter((key) => (row.assets as Record<string, unknown>)[key] !== null).sort()).toEqual(Object.keys(item.assets).sort());
    }
    const [metadata] = await rows(`SELECT decode(value) AS geo FROM parquet_kv_metadata(${path('downloads/stac-items.parquet')}) WHERE decode(key) = 'geo'`);
    const geo = JSON.parse(String(metadata!.geo)) as { version: string; primary_column: string; columns: { geometry: { encoding: string; covering: unknown } } };
    expect(geo.version).toBe('1.1.0');
    expect(geo.columns.geometry.encoding).toBe('WKB');
    expect(geo.columns.geometry.covering).toEqual({ bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] } });
    const [stacMetadata] = await rows(`SELECT decode(value) AS value FROM parquet_kv_metadata(${path('downloads/stac-items.parquet')}) WHERE decode(key) = 'stac-geoparquet'`);
    expect(JSON.parse(String(stacMetadata!.value))).toEqual({ version: '1.0.0' });
  });

  it('list every dataset once, with its licence, tags, box and links', async () => {
    const { model } = readModel(config.distDir).file;
    const read = await rows(`SELECT id, collection, slug, license, tags, file_count, bbox, page_url FROM read_parquet(${path('downloads/datasets.parquet')}) ORDER BY id`);
    const datasets = model.collections.flatMap((collection) => collection.datasets.map((dataset) => ({ collection, dataset }))).sort((a, b) => a.dataset.id - b.dataset.id);
    expect(read.map((row) => Number(row.id))).toEqual(datasets.map(({ dataset }) => dataset.id));
    for (const [position, { collection, dataset }] of datasets.entries()) {
      const row = read[position]!;
      expect(row.collection).toBe(collection.slug);
      expect(row.license).toBe(dataset.license ?? null);
      expect(Number(row.file_count)).toBe(dataset.files.length);
      expect((row.tags as { key: string }[]).map((tag) => tag.key)).toEqual(Object.keys(dataset.tags));
      expect((await get(server, new URL(String(row.page_url)).pathname)).status).toBe(200);
    }
    const [cities] = await rows(`SELECT bbox FROM read_parquet(${path('downloads/datasets.parquet')}) WHERE slug = 'us-cities'`);
    expect((cities!.bbox as { xmin: number }).xmin).toBeLessThan(-150);
  });

  it('render again, after an edit, only the edited collection\'s rows, and still hold every dataset', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const partsDir = join(config.cacheDir, 'downloads');
    const before = new Set(await readdir(partsDir));
    expect(before.size).toBe(9);
    const record = join(config.catalogDir, 'datasets/geonames/megacities.yaml');
    await writeFile(record, (await readFile(record, 'utf8')).replace('name: Cities of a million or more', 'name: Cities of a million people or more'));
    await buildCatalog({ config });
    const after = new Set(await readdir(partsDir));
    expect([...after].filter((name) => !before.has(name))).toHaveLength(3);
    expect([...before].filter((name) => !after.has(name))).toHaveLength(3);
    const names = await rows(`SELECT name FROM read_parquet(${quoteLiteral(join(config.distDir, 'downloads/datasets.parquet'))})`);
    expect(names).toHaveLength(12);
    expect(names.map((row) => row.name)).toContain('Cities of a million people or more');
  }, 120_000);

  it('join parts whose collections have nothing in common: one with bounds, a CRS and a provider with a URL, one with none of them but a provider without one', async () => {
    const file = (slug: string, source: string) => ['files:', `  - slug: ${slug}`, `    name: ${slug}`, '    formats:', `      - format: ${source}`, ''].join('\n');
    const { config } = await makeTempCatalog({
      'formats.yaml': await readFile(join(ROOT, 'catalog-data/formats.yaml'), 'utf8'),
      'collections/maps.yaml': 'slug: maps\nname: Maps\nlicense: CC0-1.0\nproviders:\n  - name: Someone\n    roles: [producer]\n    url: https://someone.example.org\n',
      // First by name: its provider has no URL, where the other's has one, and its file no bounds and no CRS.
      'collections/services.yaml': 'slug: services\nname: Feature services\nproviders:\n  - name: A service\n    roles: [host]\n',
      'datasets/cities.yaml': `slug: cities\ncollection: maps\nname: Cities\n${file('cities', 'geoparquet\n        sources:\n          - version: 1\n            path: cities.parquet')}`,
      'datasets/feed.yaml': `slug: feed\ncollection: services\nname: A feature service\n${file('feed', 'geojson\n        sources:\n          - version: 1\n            api: { url: "https://service.example.org/items" }')}`,
    }, { 'cities.parquet': join(ROOT, 'catalog-data/data/geonames/megacities/3.1.0/megacities.parquet') });
    await buildCatalog({ config });
    const items = await rows(`SELECT collection, bbox, geometry IS NULL AS empty FROM read_parquet(${quoteLiteral(join(config.distDir, 'downloads/stac-items.parquet'))}) ORDER BY collection`);
    expect(items.map((row) => [row.collection, row.empty])).toEqual([['maps.cities', false], ['services.feed', true]]);
    const datasets = await rows(`SELECT slug, len(providers) AS providers, bbox FROM read_parquet(${quoteLiteral(join(config.distDir, 'downloads/datasets.parquet'))}) ORDER BY slug`);
    expect(datasets.map((row) => [row.slug, Number(row.providers), row.bbox === null])).toEqual([['cities', 1, false], ['feed', 1, true]]);
  }, 120_000);
});
