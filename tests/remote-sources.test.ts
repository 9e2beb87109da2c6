import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { BuildError } from '../generator/errors.ts';
import type { Config } from '../runtime/config.ts';
import { startBucket, type TestBucket } from './helpers/bucket.ts';
import { makeTempCatalog, ROOT, snapshotTree } from './helpers/catalog.ts';
import { findFreePort } from './helpers/web-app.ts';

const CITIES = join(ROOT, 'catalog-data/data/geonames/cities/3.1.0/cities-1000.parquet');
const CAPITALS = join(ROOT, 'catalog-data/data/geonames/national-capitals/3.1.0/national-capitals.parquet');
const BUCKET = 'remote-data';

/** A file record with one GeoParquet source at `path` in `location`. */
const fileRecord = (slug: string, location: string | undefined, path: string) => [
  `  - slug: ${slug}`, `    name: ${slug}`, '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1',
  ...(location ? [`            storage_location: ${location}`] : []), `            path: ${path}`,
];

/** A catalog with the same cities file in the data folder, in the bucket through S3, and in it over HTTP. */
async function remoteCatalog(bucket: TestBucket, files: string[][], closedPort?: number) {
  const locations = [
    '- slug: bucket-data', '  name: Data in a bucket', '  backend_type: s3', `  base_url: https://data.example.org/${BUCKET}`, `  bucket: ${BUCKET}`, `  endpoint_url: ${bucket.endpoint}`,
    '- slug: bucket-http', '  name: The same bucket over HTTP', '  backend_type: http', `  base_url: ${bucket.endpoint}/${BUCKET}`,
    ...(closedPort ? ['- slug: nowhere', '  name: A store that is down', '  backend_type: s3', '  base_url: https://nowhere.example.org', '  bucket: gone', `  endpoint_url: http://127.0.0.1:${closedPort}`] : []),
  ];
  return makeTempCatalog({
    'formats.yaml': '- slug: geoparquet\n  format_type: geoparquet\n  name: GeoParquet\n  mime_type: application/vnd.apache.parquet\n',
    'storage-locations.yaml': `${await readFile(join(ROOT, 'catalog-data/storage-locations.yaml'), 'utf8')}\n${locations.join('\n')}\n`,
    'datasets/places.yaml': ['slug: places', 'collection: maps', 'name: Places', 'files:', ...files.flat(), ''].join('\n'),
  }, { 'places/cities.parquet': CITIES });
}

/** The source metadata of a file's only source, with its columns, as the file's schema document gives it. */
async function sourceMetadata(config: Config, file: string) {
  const document = JSON.parse(await readFile(join(config.distDir, `api/collections/maps/datasets/places/files/${file}/schema/index.json`), 'utf8'));
  return { ...document.schema.source.source_metadata, columns: document.schema.columns };
}

describe('sources in object storage: the build reads their GeoParquet footers in byte ranges', () => {
  let bucket: TestBucket;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    bucket = await startBucket(BUCKET);
    // The build reads credentials as a user's shell gives them: from the standard variables.
    for (const [name, value] of Object.entries(bucket.env)) {
      saved[name] = process.env[name];
      if (name !== 'AWS_ENDPOINT_URL') process.env[name] = value;
    }
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CITIES) }));
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await bucket?.stop();
  });

  it('gives a remote file the count, columns, null counts, ranges and bounds the local file has, reading under 2% of it', async () => {
    const { config } = await remoteCatalog(bucket, [fileRecord('local', undefined, 'places/cities.parquet'), fileRecord('s3', 'bucket-data', 'places/cities.parquet'), fileRecord('http', 'bucket-http', 'places/cities.parquet')]);
    const lines: string[] = [];
    await buildCatalog({ config, log: (line) => lines.push(line) });
    const local = await sourceMetadata(config, 'local');
    const footerRead = lines.find((line) => line.startsWith('read the footers of 2 remote GeoParquet files'));
    expect(footerRead).toBeDefined();
    expect(Number(/\(([\d.]+)%\)/.exec(footerRead!)![1])).toBeLessThan(2);
    for (const file of ['s3', 'http']) {
      const remote = await sourceMetadata(config, file);
      expect(remote.size_bytes).toBe((await stat(CITIES)).size);
      expect(remote.feature_count).toBe(local.feature_count);
      expect(remote.columns_hash).toBe(local.columns_hash);
      expect(remote.geometry_type).toBe(local.geometry_type);
      expect(remote.bounds).toEqual(local.bounds);
      for (const [index, column] of remote.columns.entries()) {
        const mine = local.columns[index];
        expect([column.name, column.type]).toEqual([mine.name, mine.type]);
        // Statistics give what a scan gives where the writer recorded them; what needs every row stays null.
        if (column.num_null_values !== null) expect(column.num_null_values, column.name).toBe(mine.num_null_values);
        if (column.min !== null) expect([column.min, column.max], column.name).toEqual([mine.min, mine.max]);
        expect([column.num_unique_values, column.example_values]).toEqual([null, null]);
      }
      expect(remote.columns.filter((column: { num_null_values: number | null }) => column.num_null_values !== null).length).toBeGreaterThan(5);
      expect(remote.columns.some((column: { min: number | null }) => column.min !== null)).toBe(true);
      // No credential or endpoint reaches the documents; the public base_url does.
      const text = await readFile(join(config.distDir, 'api/collections/maps/datasets/places/files/s3/schema/index.json'), 'utf8');
      expect(text).toContain(`https://data.example.org/${BUCKET}/places/cities.parquet`);
      expect(text).not.toContain(bucket.env.AWS_SECRET_ACCESS_KEY!);
    }

    // Unchanged objects: asked for their version, not read again.
    lines.length = 0;
    await buildCatalog({ config, log: (line) => lines.push(line) });
    expect(lines.some((line) => line.startsWith('read the footers'))).toBe(false);

    // Other bytes under the same key: a new ETag, read again.
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CAPITALS) }));
    lines.length = 0;
    await buildCatalog({ config, log: (line) => lines.push(line) });
    expect(lines.some((line) => line.startsWith('read the footers of 2 remote'))).toBe(true);
    expect((await sourceMetadata(config, 's3')).feature_count).toBeLessThan(local.feature_count);
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CITIES) }));
  });

  it('fails the build naming each unreadable source, its location and why, and leaves dist/ as it was', async () => {
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/notes.parquet', Body: 'not parquet at all, just text' }));
    const closedPort = await findFreePort();
    const good = [fileRecord('s3', 'bucket-data', 'places/cities.parquet')];
    const { config } = await remoteCatalog(bucket, good, closedPort);
    await buildCatalog({ config });
    const before = await snapshotTree(config.distDir);

    const broken = await remoteCatalog(bucket, [
      ...good, fileRecord('missing', 'bucket-data', 'places/missing.parquet'), fileRecord('text', 'bucket-data', 'places/notes.parquet'),
      fileRecord('down', 'nowhere', 'places/cities.parquet'), fileRecord('http-missing', 'bucket-http', 'places/missing.parquet'),
    ], closedPort);
    const error = await buildCatalog({ config: { ...broken.config, distDir: config.distDir } }).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(BuildError);
    const messages = (error as BuildError).issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.message}`);
    expect(messages).toHaveLength(4);
    expect(messages.find((message) => message.includes('places/missing.parquet" in storage location "bucket-data"'))).toMatch(/^UnreadableDataFile datasets\/places\.yaml:\d+ .*s3:\/\/remote-data\/places\/missing\.parquet does not exist \(HTTP 404/);
    expect(messages.find((message) => message.includes('"bucket-data"') && message.includes('notes.parquet'))).toMatch(/is not a Parquet file/);
    expect(messages.find((message) => message.includes('"nowhere"'))).toMatch(new RegExp(`cannot reach http://127\\.0\\.0\\.1:${closedPort} \\(ECONNREFUSED\\)`));
    expect(messages.find((message) => message.includes('"bucket-http"'))).toMatch(/missing\.parquet does not exist \(HTTP 404\)/);
    for (const message of messages) expect(message).not.toContain(bucket.env.AWS_SECRET_ACCESS_KEY!);

    const after = await snapshotTree(config.distDir);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, file] of after) expect(file.bytes.equals(before.get(path)!.bytes), path).toBe(true);
  });
});
