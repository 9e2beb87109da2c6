import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { BuildError } from '../generator/errors.ts';
import type { Config } from '../runtime/config.ts';
import { startBucket, type TestBucket } from './helpers/bucket.ts';
import { snapshotTree } from './helpers/catalog.ts';
import { BUCKET, CAPITALS, CITIES, fileRecord, remoteCatalog, useBucketCredentials } from './helpers/remote.ts';
import { findFreePort } from './helpers/web-app.ts';

/** The source metadata of a file's only source, with its columns, as the file's schema document gives it. */
async function sourceMetadata(config: Config, file: string) {
  const document = JSON.parse(await readFile(join(config.distDir, `api/collections/maps/datasets/places/files/${file}/schema/index.json`), 'utf8'));
  return { ...document.schema.source.source_metadata, columns: document.schema.columns };
}

describe('sources in object storage: the build reads them once per version, or only their footers', () => {
  let bucket: TestBucket;
  let restore = () => undefined as void;
  beforeAll(async () => {
    bucket = await startBucket(BUCKET);
    restore = useBucketCredentials(bucket);
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CITIES) }));
  });
  afterAll(async () => {
    restore();
    await bucket?.stop();
  });

  it('gives a remote file the metadata of the local file, and reads it again only when its ETag changes', async () => {
    const { config } = await remoteCatalog(bucket, [fileRecord('local', undefined, 'places/cities.parquet'), fileRecord('s3', 'bucket-data', 'places/cities.parquet'), fileRecord('http', 'bucket-http', 'places/cities.parquet')]);
    const lines: string[] = [];
    await buildCatalog({ config, log: (line) => lines.push(line) });
    const local = await sourceMetadata(config, 'local');
    // Every measure, distinct values and GEOS validity included, as the local file's.
    expect(local.columns.some((column: { num_unique_values: number | null }) => column.num_unique_values !== null)).toBe(true);
    for (const file of ['s3', 'http']) expect(await sourceMetadata(config, file)).toEqual(local);
    expect(lines).toContain('read 2 files in object storage whole (' + ((await stat(CITIES)).size * 2 / 1e6).toFixed(1) + ' MB); the others were unchanged');

    lines.length = 0;
    await buildCatalog({ config, log: (line) => lines.push(line) });
    expect(lines.some((line) => line.includes('in object storage whole'))).toBe(false);
    expect(await sourceMetadata(config, 's3')).toEqual(local);

    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CAPITALS) }));
    lines.length = 0;
    await buildCatalog({ config, log: (line) => lines.push(line) });
    expect(lines.some((line) => line.startsWith('read 2 files in object storage whole'))).toBe(true);
    const changed = await sourceMetadata(config, 's3');
    expect(changed.feature_count).toBeLessThan(local.feature_count);
    expect(changed.bounds).not.toEqual(local.bounds);
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'places/cities.parquet', Body: await readFile(CITIES) }));
  });

  it('with --shallow, gives a remote file the count, columns, null counts, ranges and bounds the local file has, reading under 2% of it', async () => {
    const made = await remoteCatalog(bucket, [fileRecord('local', undefined, 'places/cities.parquet'), fileRecord('s3', 'bucket-data', 'places/cities.parquet'), fileRecord('http', 'bucket-http', 'places/cities.parquet')]);
    const config: Config = { ...made.config, remoteScan: 'footer' };
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
    const { config } = await remoteCatalog(bucket, good, { closedPort });
    await buildCatalog({ config });
    const before = await snapshotTree(config.distDir);

    const broken = await remoteCatalog(bucket, [
      ...good, fileRecord('missing', 'bucket-data', 'places/missing.parquet'), fileRecord('text', 'bucket-data', 'places/notes.parquet'),
      fileRecord('down', 'nowhere', 'places/cities.parquet'), fileRecord('http-missing', 'bucket-http', 'places/missing.parquet'),
    ], { closedPort });
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
