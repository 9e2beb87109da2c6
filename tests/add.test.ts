import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { addRecords } from '../generator/scaffold/add.ts';
import { loadConfig, type Config } from '../runtime/config.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { post, sourceRef, TEST_KEYS } from './helpers/queries.ts';

const run = promisify(execFile);
const SAMPLE = join(ROOT, 'catalog-data/data');

/**
 * A steward's folder, made here: a GeoParquet file, a Parquet file DuckDB wrote with a WKB column and no GeoParquet
 * metadata, a GeoJSON file, a shapefile with its sidecars, a GeoPackage of four layers and a File Geodatabase,
 * and a text file that is no data.
 */
async function stewardFolder(): Promise<{ root: string; config: Config }> {
  const root = await makeTempDir();
  const data = join(root, 'data');
  await mkdir(join(data, 'towns'), { recursive: true });
  await copyFile(join(SAMPLE, 'geonames/cities/3.1.0/cities-100000.parquet'), join(data, 'towns/big-towns.parquet'));
  await copyFile(join(SAMPLE, 'natural-earth/countries/2.0.2/countries-110m.geojson'), join(data, 'World_Countries.geojson'));
  for (const part of await readdir(join(SAMPLE, 'geonames/megacities/3.1.0'))) {
    if (/\.(shp|shx|dbf|prj|cpg)$/.test(part)) await copyFile(join(SAMPLE, 'geonames/megacities/3.1.0', part), join(data, 'towns', part));
  }
  await copyFile(join(SAMPLE, 'us-census/us-boundaries/3.0.1/us-boundaries.gpkg'), join(data, 'us-boundaries.gpkg'));
  await writeFile(join(data, 'notes.txt'), 'not data\n');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run('SET enable_geoparquet_conversion = false');
    await connection.run(`COPY (SELECT city_id, name, population, geometry FROM read_parquet('${join(SAMPLE, 'geonames/national-capitals/3.1.0/national-capitals.parquet')}')) TO '${join(data, 'capitals.parquet')}' (FORMAT parquet)`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  const config = loadConfig({}, {
    catalogDir: join(root, 'catalog'), dataDir: data, distDir: join(root, 'dist'), cacheDir: join(root, 'cache'),
    baseUrl: 'https://catalog.example.org', buildConcurrency: 2, queryKeys: TEST_KEYS,
  });
  return { root, config };
}

describe('geoshelf add: records for a steward\'s own files', () => {
  let config: Config;
  let server: GeoshelfServer;
  let written: string[];
  let warningsOfBuild: string[] = [];
  let filesReadByBuild = -1;
  beforeAll(async () => {
    ({ config } = await stewardFolder());
    const result = await addRecords({ config, paths: [config.dataDir], collection: 'our-data', version: '2026' });
    written = result.written;
    const built = await buildCatalog({ config });
    warningsOfBuild = built.warnings;
    filesReadByBuild = built.dataFilesRead;
    server = createServer({ config });
  });
  afterAll(async () => {
    await server?.close();
  });

  const json = async (path: string) => {
    const response = await server.fetch(new Request(`https://catalog.example.org${path}`));
    expect(response.status, path).toBe(200);
    return response.json() as Promise<Record<string, any>>;
  };

  it('writes a dataset per data set, a file per layer, the formats, a storage location and the collection', async () => {
    expect(written.sort()).toEqual([
      'collections/our-data.yaml', 'datasets/our-data/big-towns.yaml', 'datasets/our-data/capitals.yaml', 'datasets/our-data/megacities.yaml',
      'datasets/our-data/us-boundaries.yaml', 'datasets/our-data/world-countries.yaml', 'formats.yaml', 'storage-locations.yaml',
    ]);
    const boundaries = parse(await readFile(join(config.catalogDir, 'datasets/our-data/us-boundaries.yaml'), 'utf8'));
    expect(boundaries.files.map((file: { layer_name: string }) => file.layer_name)).toEqual(['counties', 'nation', 'state_borders', 'states']);
    const towns = parse(await readFile(join(config.catalogDir, 'datasets/our-data/big-towns.yaml'), 'utf8'));
    expect(towns.name).toBe('Big towns');
    // Every column to describe, but not the geometry and its covering, which describe themselves.
    expect(Object.keys(towns.files[0].columns)).toEqual(['city_id', 'name', 'alt_country', 'country', 'feature_code', 'admin_code', 'population', 'municipality']);
    expect(Object.values(towns.files[0].columns).every((text) => String(text).startsWith('TODO'))).toBe(true);
    expect(towns.files[0].formats).toEqual([{ format: 'geoparquet', sources: [{ version: '2026', path: 'towns/big-towns.parquet' }] }]);
    // add read each file into the build's cache, so the build after it read none again.
    expect(filesReadByBuild).toBe(0);
  });

  it('builds a catalog that serves them: the API, the pages, STAC, OGC features and SQL', async () => {
    const collection = await json('/api/collections/our-data?limit=100');
    expect(collection.datasets.map((dataset: { slug: string }) => dataset.slug).sort()).toEqual(['big-towns', 'capitals', 'megacities', 'us-boundaries', 'world-countries']);
    const towns = await json('/api/collections/our-data/datasets/big-towns/files/big-towns');
    const geoparquet = towns.file.formats.find((format: { format: { format_type: string } }) => format.format.format_type === 'geoparquet');
    expect(geoparquet.sources[0].source_metadata.feature_count).toBe(4442);
    // The build made the GeoParquet file's PMTiles twin, for the map.
    expect(towns.file.formats.map((format: { format: { format_type: string } }) => format.format.format_type)).toContain('pmtiles');
    const page = await server.fetch(new Request('https://catalog.example.org/collections/our-data/datasets/big-towns/'));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Big towns');
    expect((await json('/stac/our-data/big-towns')).type).toBe('Collection');
    const layers = (await json('/features/collections')).collections.map((layer: { id: string }) => layer.id);
    expect(layers).toContain('our-data.big-towns.big-towns');
    const items = await json('/features/collections/our-data.big-towns.big-towns/items?limit=3');
    expect(items.features).toHaveLength(3);
    const query = await post(server, '/api/queries', { sql: 'SELECT count(*) AS n FROM t', sources: [sourceRef(server, 't', 'our-data', 'big-towns', 'big-towns')] });
    expect(query.status).toBe(200);
    expect(Number(((await query.json()) as { rows: { n: number }[] }).rows[0]!.n)).toBe(4442);
    // A Parquet file without GeoParquet metadata builds, and its warning names its WKB column and the way out.
    const capitals = await json('/api/collections/our-data/datasets/capitals/files/capitals');
    expect(capitals.file.formats[0].sources[0].source_metadata.feature_count).toBe(241);
    const aboutCapitals = warningsOfBuild.filter((warning) => warning.startsWith('capitals.parquet'));
    // One warning, with the way out; not a second one about its twin.
    expect(aboutCapitals).toHaveLength(1);
    expect(aboutCapitals[0]).toMatch(/"geometry" looks like WKB geometries, .*npx geoshelf convert/);
    // The GeoPackage's layers are files of the dataset.
    expect((await json('/api/collections/our-data/datasets/us-boundaries')).dataset.files).toHaveLength(4);
  });

  it('adds only what is new when run again, and never rewrites a record a steward edited', async () => {
    const path = join(config.catalogDir, 'datasets/our-data/big-towns.yaml');
    const edited = (await readFile(path, 'utf8')).replace('name: Big towns', 'name: Towns of 100,000 or more');
    await writeFile(path, edited);
    await copyFile(join(SAMPLE, 'geonames/megacities/3.1.0/megacities.parquet'), join(config.dataDir, 'towns/megacities.parquet'));
    const again = await addRecords({ config, paths: [config.dataDir], collection: 'our-data' });
    // The new GeoParquet file has the name of a dataset that exists: it becomes one of its own, not an edit of it.
    expect(again.written).toEqual(['datasets/our-data/megacities-2.yaml']);
    expect(again.skipped.map((skip) => skip.path)).toEqual(expect.arrayContaining(['towns/big-towns.parquet', 'towns/big-towns.pmtiles', 'notes.txt']));
    expect(await readFile(path, 'utf8')).toBe(edited);
  });

  it('is a command: it names the collection it needs, and refuses a path outside the data folder', async () => {
    const env = { ...process.env, GEOSHELF_DATA_DIR: config.dataDir, GEOSHELF_CATALOG_DIR: config.catalogDir, GEOSHELF_CACHE_DIR: config.cacheDir, CI: '1' };
    const missing = await run(process.execPath, [join(ROOT, 'cli/geoshelf.ts'), 'add', config.dataDir], { env }).then(() => undefined, (error: { code: number; stderr: string }) => error);
    expect(missing?.code).toBe(2);
    expect(missing?.stderr).toContain('--collection');
    const outside = await run(process.execPath, [join(ROOT, 'cli/geoshelf.ts'), 'add', ROOT, '--collection', 'our-data'], { env }).then(() => undefined, (error: { code: number; stderr: string }) => error);
    expect(outside?.code).toBe(1);
    expect(outside?.stderr).toMatch(/is not inside the data folder/);
    const nothing = await run(process.execPath, [join(ROOT, 'cli/geoshelf.ts'), 'add', config.dataDir, '--collection', 'our-data'], { env });
    expect(nothing.stdout).toContain('nothing new to add');
  });
});

describe('geoshelf add --convert', () => {
  it('writes GeoParquet beside each file that is not, lists it as the file\'s GeoParquet source, and catalogs a CSV that way', async () => {
    const { config } = await stewardFolder();
    const towns = (await readFile(join(SAMPLE, 'geonames/national-capitals/3.1.0/national-capitals.geojson'), 'utf8'));
    const features = (JSON.parse(towns) as { features: { properties: { name: string; population: number }; geometry: { coordinates: [number, number] } }[] }).features;
    await writeFile(join(config.dataDir, 'capitals-table.csv'), ['name,population,longitude,latitude', ...features.map((feature) => `"${feature.properties.name}",${feature.properties.population},${feature.geometry.coordinates.join(',')}`)].join('\n'));
    const result = await addRecords({ config, paths: [config.dataDir], collection: 'our-data', version: '1', convert: true });
    const record = async (slug: string) => parse(await readFile(join(config.catalogDir, `datasets/our-data/${slug}.yaml`), 'utf8'));
    // A CSV becomes its GeoParquet file; a GeoJSON file gets one beside it, first among its formats.
    expect((await record('capitals-table')).files[0].formats).toEqual([{ format: 'geoparquet', sources: [{ version: '1', path: 'capitals-table.parquet' }] }]);
    expect((await record('world-countries')).files[0].formats.map((format: { format: string }) => format.format)).toEqual(['geoparquet', 'geojson']);
    // The plain Parquet file is replaced by its conversion; each GeoPackage layer gets its own GeoParquet file.
    expect((await record('capitals')).files[0].formats[0].sources[0].path).toBe('capitals.geo.parquet');
    const layers = (await record('us-boundaries')).files as { layer_name: string; formats: { format: string; sources: { path: string }[] }[] }[];
    expect(layers.map((file) => file.formats.map((format) => `${format.format} ${format.sources[0]!.path}`))).toEqual(['counties', 'nation', 'state_borders', 'states'].map((layer) => [
      `geoparquet us-boundaries-${layer.replace('_', '-')}.parquet`, 'geopackage us-boundaries.gpkg',
    ]));
    expect(result.skipped.filter((skip) => skip.reason.startsWith('not converted'))).toEqual([]);
    // They build, and the CSV's points are queryable and in /features.
    const built = await buildCatalog({ config });
    expect(built.warnings.filter((warning) => /no GeoParquet metadata|looks like WKB/.test(warning))).toEqual([]);
    const server = createServer({ config });
    try {
      const query = await post(server, '/api/queries', { sql: 'SELECT count(*) AS n FROM t', sources: [sourceRef(server, 't', 'our-data', 'capitals-table', 'capitals-table')] });
      expect(Number(((await query.json()) as { rows: { n: number }[] }).rows[0]!.n)).toBe(features.length);
      const layers = await (await server.fetch(new Request('https://catalog.example.org/features/collections'))).json() as { collections: { id: string }[] };
      expect(layers.collections.map((layer) => layer.id)).toEqual(expect.arrayContaining(['our-data.capitals-table.capitals-table', 'our-data.us-boundaries.states', 'our-data.capitals.capitals']));
    } finally {
      await server.close();
    }
  });
});
