import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_MANIFEST_KEY, type DataManifest } from '../deploy/data-plan.ts';
import { publishData, type DataPublishOptions } from '../deploy/publish-data.ts';
import { PublishError } from '../deploy/published-tree.ts';
import { loadConfig } from '../runtime/config.ts';
import { startBucket, type TestBucket } from './helpers/bucket.ts';
import { makeTempDir } from './helpers/catalog.ts';
import { childEnvironment, runScript } from './helpers/processes.ts';
import { sampleConfig } from './helpers/sample.ts';

const PREFIX = 'data/v1';
const SAMPLE = [
  'natural-earth/countries/2.0.2/countries-110m.parquet',
  'natural-earth/countries/2.0.2/countries-110m.pmtiles',
  'natural-earth/countries/2.0.2/countries-110m.gdb',
  'geonames/megacities/3.1.0/megacities.shp',
  'geonames/megacities/3.1.0/megacities.shx',
  'geonames/megacities/3.1.0/megacities.dbf',
  'geonames/megacities/3.1.0/megacities.prj',
  'geonames/megacities/3.1.0/megacities.cpg',
  'geonames/national-capitals/3.1.0/national-capitals.geojson',
];
const HIDDEN = ['.DS_Store', 'geonames/.cache/megacities.tmp'];
/** Objects put under the prefix by someone else, which no publish may delete. */
const FOREIGN = [`${PREFIX}/geonames/notes.txt`, `${PREFIX}/natural-earth/countries/2.0.2/countries-110m.gdb/a00000099.gdbtable`];

let bucket: TestBucket;
let root: string;
let dataDir: string;

/** Publishes the test's data folder to the test bucket, collecting the progress lines. */
async function publishFolder(extra: Partial<DataPublishOptions> = {}) {
  const lines: string[] = [];
  const summary = await publishData({ dataDir, cacheDir: join(root, 'cache'), target: `s3://${bucket.bucket}/${PREFIX}`, cacheMaxAge: 300, env: bucket.env, log: (line) => lines.push(line), ...extra });
  return { summary, lines };
}

/** The environment of `npm run publish` for the test's data folder and bucket. */
function cliEnvironment(overrides: { dataDir?: string } = {}, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const config = loadConfig({}, { dataDir: overrides.dataDir ?? dataDir, cacheDir: join(root, 'cache'), distDir: join(root, 'dist'), cacheMaxAge: 300 });
  return childEnvironment(config, { ...bucket.env, ...extra });
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function bucketManifest(): Promise<DataManifest> {
  return JSON.parse((await bucket.read(`${PREFIX}/${DATA_MANIFEST_KEY}`))!.toString()) as DataManifest;
}

/** Every file of the data folder the publish should upload, as keys under the prefix. */
function dataKeys(paths: string[]): string[] {
  return paths.map((path) => `${PREFIX}/${path}`);
}

/** Keys of the bucket under the prefix that are data, without the data manifest. */
async function publishedKeys(): Promise<string[]> {
  return (await bucket.keys(`${PREFIX}/`)).filter((key) => key !== `${PREFIX}/${DATA_MANIFEST_KEY}`);
}

/** The files of the data folder whose path has no name beginning with a dot. */
async function listVisibleFiles(): Promise<string[]> {
  const entries = await readdir(dataDir, { recursive: true, withFileTypes: true });
  const paths = entries.filter((entry) => entry.isFile()).map((entry) => relative(dataDir, join(entry.parentPath, entry.name)));
  return paths.filter((path) => !path.split('/').some((name) => name.startsWith('.')));
}

const GDB_FILES = ['a00000001.gdbtable', 'a00000009.gdbtable', 'a00000009.spx', 'gdb', 'timestamps'].map((name) => `natural-earth/countries/2.0.2/countries-110m.gdb/${name}`);

beforeAll(async () => {
  bucket = await startBucket('geoshelf-data');
  root = await makeTempDir();
  dataDir = join(root, 'data');
  for (const path of SAMPLE) await cp(join(sampleConfig().dataDir, path), join(dataDir, path), { recursive: true });
  for (const path of HIDDEN) {
    await mkdir(dirname(join(dataDir, path)), { recursive: true });
    await writeFile(join(dataDir, path), 'not data');
  }
}, 120_000);

afterAll(async () => {
  await bucket?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('npm run publish -- --data', () => {
  it('puts every file of the folder at its path with the same bytes, its type and hash, and leaves dot files home', async () => {
    const run = runScript(['deploy/publish.ts', '--data', `s3://${bucket.bucket}/${PREFIX}`], cliEnvironment());
    expect(await run.exitCode()).toBe(0);
    expect(run.output()).toMatch(/uploaded (\d+) of \1 objects/);
    expect(run.output()).toMatch(/^uploaded \d+ objects \(.*\), deleted 0, 0 unchanged, 0 kept/m);

    const keys = await publishedKeys();
    expect(keys).toEqual(dataKeys(await listVisibleFiles()).sort());
    expect(keys).toEqual(expect.arrayContaining(dataKeys([...SAMPLE.filter((path) => !path.endsWith('.gdb')), ...GDB_FILES])));
    for (const path of HIDDEN) expect(keys).not.toContain(`${PREFIX}/${path}`);
    const manifest = await bucketManifest();
    expect(dataKeys(Object.keys(manifest.files)).sort()).toEqual(keys);
    for (const key of keys) {
      const local = await readFile(join(dataDir, key.slice(PREFIX.length + 1)));
      const head = await bucket.head(key);
      expect(sha256((await bucket.read(key))!), key).toBe(sha256(local));
      expect(head?.Metadata?.sha256, key).toBe(sha256(local));
      expect(head?.CacheControl, key).toBe('public, max-age=300');
    }
  }, 120_000);

  it.each([
    ['natural-earth/countries/2.0.2/countries-110m.parquet', 'application/vnd.apache.parquet'],
    ['natural-earth/countries/2.0.2/countries-110m.pmtiles', 'application/vnd.pmtiles'],
    ['geonames/national-capitals/3.1.0/national-capitals.geojson', 'application/geo+json'],
    ['geonames/megacities/3.1.0/megacities.shp', 'application/x-esri-shape'],
    ['geonames/megacities/3.1.0/megacities.dbf', 'application/octet-stream'],
    ['natural-earth/countries/2.0.2/countries-110m.gdb/gdb', 'application/octet-stream'],
  ])('stores %s as %s', async (path, type) => {
    expect((await bucket.head(`${PREFIX}/${path}`))?.ContentType).toBe(type);
  });

  it('uploads nothing when the folder did not change', async () => {
    const manifest = await bucket.read(`${PREFIX}/${DATA_MANIFEST_KEY}`);
    const { summary } = await publishFolder();
    expect(summary).toMatchObject({ uploaded: 0, deleted: 0, kept: 0 });
    expect(summary.unchanged).toBe((await publishedKeys()).length);
    expect(await bucket.read(`${PREFIX}/${DATA_MANIFEST_KEY}`)).toEqual(manifest);
  }, 60_000);

  it('uploads exactly a file changed to other bytes of the same size and a new one', async () => {
    const changed = 'geonames/megacities/3.1.0/megacities.prj';
    const before = await readFile(join(dataDir, changed));
    const after = Buffer.from(before.toString().replace('WGS_1984', 'WGS_1985'));
    expect(after.length).toBe(before.length);
    expect(after).not.toEqual(before);
    await writeFile(join(dataDir, changed), after);
    const added = 'us-census/us-state-capitals/3.1.0/us-state-capitals.parquet';
    await cp(join(sampleConfig().dataDir, added), join(dataDir, added));

    const plan = await publishFolder({ dryRun: true });
    expect(plan.lines.filter((line) => line.startsWith('upload '))).toEqual([
      `upload ${changed} (${after.length} bytes)`,
      `upload ${added} (${(await readFile(join(dataDir, added))).length} bytes)`,
      `upload ${DATA_MANIFEST_KEY}`,
    ]);
    const { summary } = await publishFolder();
    expect(summary).toMatchObject({ uploaded: 2, deleted: 0 });
    expect(await bucket.read(`${PREFIX}/${changed}`)).toEqual(after);
    expect(sha256((await bucket.read(`${PREFIX}/${added}`))!)).toBe(sha256(await readFile(join(dataDir, added))));
    expect((await bucketManifest()).files[changed]?.sha256).toBe(sha256(after));
  }, 60_000);

  it('keeps the object of a removed file without --delete, and deletes it, and only it, with --delete', async () => {
    const removed = 'geonames/national-capitals/3.1.0/national-capitals.geojson';
    await rm(join(dataDir, removed));
    for (const key of FOREIGN) await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: key, Body: 'not written by geoshelf' }));

    const kept = await publishFolder();
    expect(kept.summary).toMatchObject({ uploaded: 0, deleted: 0, kept: 1 });
    expect(kept.lines.some((line) => line.startsWith('1 objects listed') && line.includes('--delete'))).toBe(true);
    expect(await bucket.head(`${PREFIX}/${removed}`)).toBeDefined();
    expect(Object.keys((await bucketManifest()).files)).toContain(removed);

    const deleted = await publishFolder({ delete: true });
    expect(deleted.summary).toMatchObject({ uploaded: 0, deleted: 1, kept: 0 });
    expect(await bucket.head(`${PREFIX}/${removed}`)).toBeUndefined();
    expect(Object.keys((await bucketManifest()).files)).not.toContain(removed);
    for (const key of FOREIGN) expect(await bucket.read(key)).toEqual(Buffer.from('not written by geoshelf'));
  }, 60_000);

  it('prints the plan with --dry-run and changes nothing', async () => {
    const removed = 'geonames/megacities/3.1.0/megacities.cpg';
    await rm(join(dataDir, removed));
    await writeFile(join(dataDir, 'geonames/readme.txt'), 'new');
    const keys = await bucket.keys(`${PREFIX}/`);
    const manifest = await bucket.read(`${PREFIX}/${DATA_MANIFEST_KEY}`);
    const { summary, lines } = await publishFolder({ dryRun: true, delete: true });
    expect(summary).toMatchObject({ dryRun: true, uploaded: 1, deleted: 1 });
    expect(lines).toEqual(expect.arrayContaining(['upload geonames/readme.txt (3 bytes)', `delete ${removed}`]));
    expect(await bucket.keys(`${PREFIX}/`)).toEqual(keys);
    expect(await bucket.read(`${PREFIX}/${DATA_MANIFEST_KEY}`)).toEqual(manifest);
  }, 60_000);

  it('leaves the previous manifest when a publish fails half way, and the next run uploads what is missing', async () => {
    const manifest = await bucket.read(`${PREFIX}/${DATA_MANIFEST_KEY}`);
    const late = 'us-census/late.txt';
    await writeFile(join(dataDir, late), 'added before the failed run');
    const vanishing = 'natural-earth/countries/2.0.2/countries-110m.gdb/a00000009.gdbtable';
    const bytes = await readFile(join(dataDir, vanishing));
    const failed = publishFolder({ all: true, concurrency: 1, log: (line) => {
      // The file goes away after it was hashed and before its turn to be uploaded.
      if (line.includes('files in the data folder')) rmSync(join(dataDir, vanishing));
    } });
    await expect(failed).rejects.toThrow(PublishError);
    await expect(failed).rejects.toThrow(new RegExp(`s3://geoshelf-data/${PREFIX}: uploading ${vanishing} failed`));
    expect(await bucket.read(`${PREFIX}/${DATA_MANIFEST_KEY}`)).toEqual(manifest);
    expect(await bucket.head(`${PREFIX}/geonames/readme.txt`)).toBeDefined();
    expect(await bucket.head(`${PREFIX}/${late}`)).toBeUndefined();

    await writeFile(join(dataDir, vanishing), bytes);
    const { summary } = await publishFolder();
    expect(summary.uploaded).toBe(2);
    expect(await bucket.read(`${PREFIX}/${late}`)).toEqual(Buffer.from('added before the failed run'));
    const published = await bucketManifest();
    expect(Object.keys(published.files)).toEqual(expect.arrayContaining(['geonames/readme.txt', late]));
    expect((await publishedKeys()).filter((key) => !FOREIGN.includes(key))).toEqual(dataKeys(Object.keys(published.files)).sort());
    expect((await publishFolder()).summary.uploaded).toBe(0);
  }, 60_000);
});

describe('data publish errors are one clear line naming the bucket, without secrets', () => {
  const SECRET = 'not-the-secret-0123456789';
  const cases: [string, () => { target: string; env: NodeJS.ProcessEnv }, RegExp][] = [
    ['a store that is not there', () => ({ target: `s3://${bucket.bucket}/x`, env: cliEnvironment({}, { AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_SECRET_ACCESS_KEY: SECRET }) }), /cannot reach the object store at http:\/\/127\.0\.0\.1:9 .* s3:\/\/geoshelf-data\/x/],
    ['a bucket that does not exist', () => ({ target: 's3://no-such-bucket/x', env: cliEnvironment() }), /the bucket no-such-bucket does not exist/],
    ['a data folder that does not exist', () => ({ target: `s3://${bucket.bucket}/x`, env: cliEnvironment({ dataDir: join(root, 'no-such-folder') }) }), /cannot publish the data folder .*no-such-folder to s3:\/\/geoshelf-data\/x: it does not exist/],
    ['a data folder with only dot files', () => ({ target: `s3://${bucket.bucket}/x`, env: cliEnvironment({ dataDir: join(root, 'hidden-only') }) }), /cannot publish the data folder .*hidden-only to s3:\/\/geoshelf-data\/x: it holds no files/],
    ['a prefix that holds a published site', () => ({ target: `s3://${bucket.bucket}/site`, env: cliEnvironment() }), /s3:\/\/geoshelf-data\/site holds a published geoshelf site/],
    ['keys the store does not know', () => ({ target: `s3://${bucket.bucket}/x`, env: cliEnvironment({}, { AWS_ACCESS_KEY_ID: 'AKIAUNKNOWN', AWS_SECRET_ACCESS_KEY: SECRET }) }), /access denied .* s3:\/\/geoshelf-data\/x/],
  ];

  beforeAll(async () => {
    await mkdir(join(root, 'hidden-only/.git'), { recursive: true });
    await writeFile(join(root, 'hidden-only/.git/HEAD'), 'ref: refs/heads/main');
    const site = { format: 'geoshelf-manifest/1', settings: { base_url: 'https://x.org', storage_base_url: 'https://x.org/data' }, files: {} };
    await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: 'site/manifest.json', Body: JSON.stringify(site) }));
  });

  it.each(cases)('%s', async (_name, make, message) => {
    const { target, env } = make();
    const before = await bucket.keys('');
    const run = runScript(['deploy/publish.ts', '--data', target], env);
    expect(await run.exitCode()).toBe(1);
    const output = run.output().trim();
    expect(output).toMatch(message);
    expect(output.split('\n').filter((line) => line.startsWith('publish:'))).toHaveLength(1);
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain(bucket.env.AWS_SECRET_ACCESS_KEY!);
    expect(await bucket.keys('')).toEqual(before);
  }, 120_000);

  it.each([
    ['--invalidations', ['--data', '--invalidations', 'purge.json'], /--invalidations goes with the site publish/],
    ['--delete without --data', ['--delete'], /--delete goes with --data/],
  ])('refuses %s as a usage error', async (_name, flags, message) => {
    const run = runScript(['deploy/publish.ts', ...flags, `s3://${bucket.bucket}/${PREFIX}`], cliEnvironment());
    expect(await run.exitCode()).toBe(2);
    expect(run.output()).toMatch(message);
  });
});
