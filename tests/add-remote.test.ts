import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { addRecords } from '../generator/scaffold/add.ts';
import { AddError } from '../generator/scaffold/add-outcome.ts';
import { loadConfig, type Config } from '../runtime/config.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { startBucket, type TestBucket } from './helpers/bucket.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { post, sourceRef, TEST_KEYS } from './helpers/queries.ts';
import { useBucketCredentials } from './helpers/remote.ts';

const SAMPLE = join(ROOT, 'catalog-data/data');
const BUCKET = 'steward-bucket';

/** A steward's bucket, made here: under `survey/` a GeoParquet file, a GeoJSON file, a shapefile with its sidecars, a GeoPackage, and a text file. */
async function fillBucket(bucket: TestBucket): Promise<void> {
  const put = async (key: string, file: string) => bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: await readFile(file) }));
  await put('survey/towns/big-towns.parquet', join(SAMPLE, 'geonames/cities/3.1.0/cities-100000.parquet'));
  await put('survey/World_Countries.geojson', join(SAMPLE, 'natural-earth/countries/2.0.2/countries-110m.geojson'));
  for (const part of await readdir(join(SAMPLE, 'geonames/megacities/3.1.0'))) {
    if (/\.(shp|shx|dbf|prj|cpg)$/.test(part)) await put(`survey/towns/${part}`, join(SAMPLE, 'geonames/megacities/3.1.0', part));
  }
  await put('survey/us-boundaries.gpkg', join(SAMPLE, 'us-census/us-boundaries/3.0.1/us-boundaries.gpkg'));
  await put('survey/notes.txt', join(ROOT, 'package.json'));
  await put('elsewhere/capitals.parquet', join(SAMPLE, 'geonames/national-capitals/3.1.0/national-capitals.parquet'));
}

describe('geoshelf add: records for files in object storage', () => {
  let bucket: TestBucket;
  let restore = () => undefined as void;
  let config: Config;
  let server: GeoshelfServer;
  let written: string[];
  let skipped: { path: string; reason: string }[];
  const buildLog: string[] = [];
  beforeAll(async () => {
    bucket = await startBucket(BUCKET);
    await fillBucket(bucket);
    // The build and the server find the credentials in the environment, as a steward's shell gives them.
    restore = useBucketCredentials(bucket);
    const root = await makeTempDir();
    await mkdir(join(root, 'data'));
    config = loadConfig({}, {
      catalogDir: join(root, 'catalog'), dataDir: join(root, 'data'), distDir: join(root, 'dist'), cacheDir: join(root, 'cache'),
      baseUrl: 'https://catalog.example.org', buildConcurrency: 2, queryKeys: TEST_KEYS,
    });
    ({ written, skipped } = await addRecords({ config, paths: [`s3://${BUCKET}/survey`], collection: 'survey', version: '2026', env: bucket.env }));
    await buildCatalog({ config, log: (line) => buildLog.push(line) })
    server = createServer({ config });
  }, 240_000);
  afterAll(async () => {
    await server?.close();
    restore();
    await bucket?.stop();
  });

  const json = async (path: string) => {
    const response = await server.fetch(new Request(`https://catalog.example.org${path}`));
    expect(response.status, path).toBe(200);
    return response.json() as Promise<Record<string, any>>;
  };

  it('writes the datasets of every file under the prefix, and a storage location for the bucket that the sources name', async () => {
    expect(written.sort()).toEqual([
      'collections/survey.yaml', 'datasets/survey/big-towns.yaml', 'datasets/survey/megacities.yaml', 'datasets/survey/us-boundaries.yaml',
      'datasets/survey/world-countries.yaml', 'formats.yaml', 'storage-locations.yaml',
    ]);
    expect(skipped).toEqual([{ path: `s3://${BUCKET}/survey/notes.txt`, reason: 'geoshelf does not catalog .txt files' }]);
    const locations = parse(await readFile(join(config.catalogDir, 'storage-locations.yaml'), 'utf8'));
    expect(locations).toEqual([{ slug: BUCKET, name: `Bucket ${BUCKET}`, backend_type: 's3', base_url: `${bucket.endpoint}/${BUCKET}`, bucket: BUCKET, endpoint_url: bucket.endpoint }]);
    const towns = parse(await readFile(join(config.catalogDir, 'datasets/survey/big-towns.yaml'), 'utf8'));
    expect(Object.keys(towns.files[0].columns)).toEqual(['city_id', 'name', 'alt_country', 'country', 'feature_code', 'admin_code', 'population', 'municipality']);
    expect(towns.files[0].formats).toEqual([{ format: 'geoparquet', sources: [{ version: '2026', path: 'survey/towns/big-towns.parquet', storage_location: BUCKET }] }]);
    const boundaries = parse(await readFile(join(config.catalogDir, 'datasets/survey/us-boundaries.yaml'), 'utf8'));
    expect(boundaries.files.map((file: { layer_name: string }) => file.layer_name)).toEqual(['counties', 'nation', 'state_borders', 'states']);
    // add read each object into the build's caches, so the build after it read none of them again.
    expect(buildLog.filter((line) => line.includes('in object storage whole'))).toEqual([]);
  });

  it('builds a catalog that serves them where they are: the API, OGC features and SQL', async () => {
    const towns = await json('/api/collections/survey/datasets/big-towns/files/big-towns');
    const source = towns.file.formats.find((format: { format: { format_type: string } }) => format.format.format_type === 'geoparquet').sources[0];
    expect(source.source_metadata.feature_count).toBe(4442);
    expect(source.storage_location.slug).toBe(BUCKET);
    const countries = await json('/api/collections/survey/datasets/world-countries/files/world-countries');
    expect(countries.file.formats[0].sources[0].source_metadata.feature_count).toBe(177);
    const items = await json('/features/collections/survey.big-towns.big-towns/items?limit=2');
    expect(items.features).toHaveLength(2);
    const query = await post(server, '/api/queries', { sql: 'SELECT count(*) AS n FROM t', sources: [sourceRef(server, 't', 'survey', 'big-towns', 'big-towns')] });
    expect(query.status).toBe(200);
    expect(Number(((await query.json()) as { rows: { n: number }[] }).rows[0]!.n)).toBe(4442);
  });

  it('adds only what is new when run again, and takes one file by its URL into a location of its own', async () => {
    const again = await addRecords({ config, paths: [`s3://${BUCKET}/survey/`], collection: 'survey', env: bucket.env });
    expect(again.written).toEqual([]);
    expect(again.skipped.filter((skip) => skip.reason === 'a source names it already').map((skip) => skip.path).sort()).toEqual([
      `s3://${BUCKET}/survey/World_Countries.geojson`, `s3://${BUCKET}/survey/towns/big-towns.parquet`, `s3://${BUCKET}/survey/towns/megacities.shp`, `s3://${BUCKET}/survey/us-boundaries.gpkg`,
    ]);
    // Over HTTP (the same store answers GET without signing): a new location whose base_url is the file's folder.
    const url = `${bucket.endpoint}/${BUCKET}/elsewhere/capitals.parquet`;
    const byUrl = await addRecords({ config, paths: [url], collection: 'survey', version: '1', env: {} });
    expect(byUrl.written.sort()).toEqual(['datasets/survey/capitals.yaml', 'storage-locations.yaml']);
    const locations = parse(await readFile(join(config.catalogDir, 'storage-locations.yaml'), 'utf8'));
    expect(locations[1]).toEqual({ slug: '127-0-0-1', name: '127.0.0.1', backend_type: 'http', base_url: `${bucket.endpoint}/${BUCKET}/elsewhere` });
    const capitals = parse(await readFile(join(config.catalogDir, 'datasets/survey/capitals.yaml'), 'utf8'));
    expect(capitals.files[0].formats[0].sources).toEqual([{ version: '1', path: 'capitals.parquet', storage_location: '127-0-0-1' }]);
  });

  it('says in one line when a prefix holds nothing, or a folder is named over HTTP', async () => {
    const empty = await addRecords({ config, paths: [`s3://${BUCKET}/nothing-here/`], collection: 'survey', env: bucket.env }).then(() => undefined, (error: unknown) => error);
    expect(empty).toBeInstanceOf(AddError);
    expect((empty as Error).message).toBe(`s3://${BUCKET}/nothing-here/ holds no objects`);
    const folder = await addRecords({ config, paths: [`${bucket.endpoint}/${BUCKET}/survey/`], collection: 'survey', env: {} }).then(() => undefined, (error: unknown) => error);
    expect((folder as Error).message).toMatch(/is a folder, which cannot be listed over HTTP: name its files, or add it as s3:\/\/bucket\/prefix$/);
  });
});
