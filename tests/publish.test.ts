import { createHash, randomBytes } from 'node:crypto';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectsOfEntry, planPublish, urlsOfKey } from '../deploy/publish-plan.ts';
import { MULTIPART_BYTES, ObjectStore, parseTarget } from '../deploy/object-store.ts';
import { MARKER_KEY, publish, type PublishOptions } from '../deploy/publish.ts';
import { buildCatalog } from '../generator/build.ts';
import type { Config } from '../runtime/config.ts';
import { readManifest, type Manifest } from '../runtime/manifest.ts';
import { startBucket, type TestBucket } from './helpers/bucket.ts';
import { makeTempDir, makeTestConfig } from './helpers/catalog.ts';
import { childEnvironment, runScript } from './helpers/processes.ts';
import { sampleConfig } from './helpers/sample.ts';

const PREFIX = 'site/v1';
let bucket: TestBucket;
let config: Config & { root: string };

/** Publishes the test's tree to the test bucket, collecting the progress lines. */
async function publishTree(extra: Partial<PublishOptions> = {}) {
  const lines: string[] = [];
  const summary = await publish({ distDir: config.distDir, dataDir: config.dataDir, cacheDir: config.cacheDir, target: `s3://${bucket.bucket}/${PREFIX}`, cacheMaxAge: 300, env: bucket.env, log: (line) => lines.push(line), ...extra });
  return { summary, lines };
}

/** Every key a tree's manifest is stored as, with its siblings, plus the manifest itself. */
function expectedKeys(manifest: Manifest): string[] {
  const keys = Object.keys(manifest.files).flatMap((key) => objectsOfEntry(key, manifest.files[key]!, 300).map((object) => `${PREFIX}/${object.key}`));
  return [...keys, `${PREFIX}/manifest.json`].sort();
}

/** The manifest the bucket holds. */
async function bucketManifest(): Promise<Manifest> {
  return JSON.parse((await bucket.read(`${PREFIX}/manifest.json`))!.toString()) as Manifest;
}

async function rebuild(): Promise<Manifest> {
  await buildCatalog({ config });
  return (await readManifest(config.distDir))!;
}

/** A published manifest's entries of the built tree, without the data files. */
function treeFiles(manifest: Manifest): Manifest['files'] {
  return Object.fromEntries(Object.entries(manifest.files).filter(([key]) => !key.startsWith('data/')));
}

/** Keys of the tree whose bytes differ between two manifests (new, changed or gone). */
function changedKeys(before: Manifest, after: Manifest): string[] {
  const keys = new Set([...Object.keys(before.files), ...Object.keys(after.files)]);
  return [...keys].filter((key) => before.files[key]?.sha256 !== after.files[key]?.sha256).sort();
}

beforeAll(async () => {
  bucket = await startBucket();
  // A copy of the sample catalog, starting from the sample's build and caches, so the edits below rebuild incrementally.
  config = await makeTestConfig();
  await cp(sampleConfig().distDir, config.distDir, { recursive: true });
  await cp(sampleConfig().cacheDir, config.cacheDir, { recursive: true });
}, 120_000);

afterAll(async () => {
  await bucket?.stop();
  if (config) await rm(config.root, { recursive: true, force: true });
});

describe('npm run publish', () => {
  it('puts every file of the tree with its type, cache headers, encodings and hash, the data files, and the manifest last', async () => {
    const { summary } = await publishTree();
    const tree = (await readManifest(config.distDir))!;
    const published = await bucketManifest();
    expect(treeFiles(published)).toEqual(tree.files);
    expect(await bucket.keys(PREFIX)).toEqual(expectedKeys(published));
    expect(summary.uploaded).toBe(expectedKeys(published).length - 1);
    expect(summary.deleted).toBe(0);

    const page = await bucket.head(`${PREFIX}/index.html`);
    expect(page).toMatchObject({ ContentType: tree.files['index.html']!.type, CacheControl: 'public, max-age=300', Metadata: { sha256: tree.files['index.html']!.sha256 } });
    const brotli = await bucket.head(`${PREFIX}/api/index.json.br`);
    expect(brotli).toMatchObject({ ContentType: 'application/json', ContentEncoding: 'br', Metadata: { sha256: tree.files['api/index.json']!.sha256 } });
    expect(await bucket.read(`${PREFIX}/api/index.json.br`)).toEqual(await readFile(join(config.distDir, 'api/index.json.br')));
    expect((await bucket.head(`${PREFIX}/api/index.json.gz`))?.ContentEncoding).toBe('gzip');
    const asset = Object.keys(tree.files).find((key) => key.startsWith('_site/assets/'))!;
    expect((await bucket.head(`${PREFIX}/${asset}`))?.CacheControl).toBe('public, max-age=31536000, immutable');

    const parquet = Object.keys(published.files).find((key) => key.startsWith('data/') && key.endsWith('.parquet'))!;
    expect(await bucket.head(`${PREFIX}/${parquet}`)).toMatchObject({ ContentType: 'application/vnd.apache.parquet', Metadata: { sha256: published.files[parquet]!.sha256 } });
    expect(await bucket.read(`${PREFIX}/${parquet}`)).toEqual(await readFile(join(config.dataDir, parquet.slice('data/'.length))));
    expect(Object.keys(published.files).some((key) => key.startsWith('data/') && key.endsWith('.pmtiles'))).toBe(true);
    expect(Object.keys(published.files).some((key) => key.endsWith('.dbf'))).toBe(true);
    expect(await bucket.head(`${PREFIX}/${MARKER_KEY}`)).toBeUndefined();
  }, 120_000);

  it('uploads nothing when the same records are built again', async () => {
    await rebuild();
    const { summary } = await publishTree();
    expect(summary).toMatchObject({ uploaded: 0, deleted: 0, invalidations: [] });
    expect(summary.unchanged).toBeGreaterThan(1000);
  }, 120_000);

  it('after a one-record edit, uploads only the changed files and lists the URLs to purge', async () => {
    const before = (await readManifest(config.distDir))!;
    const record = join(config.catalogDir, 'datasets/geonames/megacities.yaml');
    await writeFile(record, (await readFile(record, 'utf8')).replace(/^name: .*$/m, 'name: Megacities of the world, renamed'));
    const after = await rebuild();
    const changed = changedKeys(before, after);
    const invalidations = join(config.root, 'purge.json');
    const { summary } = await publishTree({ invalidations });

    const expected = changed.filter((key) => Object.hasOwn(after.files, key)).flatMap((key) => objectsOfEntry(key, after.files[key]!, 300));
    expect(summary.uploaded).toBe(expected.length);
    expect(summary.uploaded).toBeLessThan(expectedKeys(after).length / 5);
    for (const key of changed.filter((key) => Object.hasOwn(after.files, key))) expect(await bucket.read(`${PREFIX}/${key}`)).toEqual(await readFile(join(config.distDir, key)));
    const purge = JSON.parse(await readFile(invalidations, 'utf8')) as string[];
    expect(purge).toEqual(summary.invalidations);
    expect(purge).toEqual(expect.arrayContaining(['/collections/geonames/datasets/megacities/', '/api/collections/geonames/datasets/megacities', '/manifest.json']));
    expect(purge).not.toContain('/collections/natural-earth/datasets/land/');
    expect(purge.every((url) => url.startsWith('/') && !url.includes('index.json') && !url.endsWith('.br'))).toBe(true);
    expect(treeFiles(await bucketManifest())).toEqual(after.files);
  }, 120_000);

  it('deletes what the new tree no longer has, after the manifest that stops naming it', async () => {
    const before = (await readManifest(config.distDir))!;
    await rm(join(config.catalogDir, 'datasets/us-census/us-county-seats.yaml'));
    const after = await rebuild();
    const gone = Object.keys(before.files).filter((key) => !Object.hasOwn(after.files, key));
    expect(gone).toContain('collections/us-census/datasets/us-county-seats/index.html');
    const { summary } = await publishTree();
    expect(summary.deleted).toBeGreaterThanOrEqual(gone.length);
    expect(summary.invalidations).toContain('/collections/us-census/datasets/us-county-seats/');
    expect(await bucket.keys(PREFIX)).toEqual(expectedKeys(await bucketManifest()));
    expect(await bucket.head(`${PREFIX}/collections/us-census/datasets/us-county-seats/index.html`)).toBeUndefined();
  }, 120_000);

  it('prints the plan with --dry-run and changes nothing', async () => {
    const record = join(config.catalogDir, 'datasets/geonames/cities.yaml');
    await writeFile(record, (await readFile(record, 'utf8')).replace(/^name: .*$/m, 'name: Cities, a dry run'));
    await rebuild();
    const keys = await bucket.keys(PREFIX);
    const manifest = await bucket.read(`${PREFIX}/manifest.json`);
    const { summary, lines } = await publishTree({ dryRun: true });
    expect(summary.dryRun).toBe(true);
    expect(summary.uploaded).toBeGreaterThan(0);
    expect(lines).toContain('upload collections/geonames/datasets/cities/index.html (' + (await readFile(join(config.distDir, 'collections/geonames/datasets/cities/index.html'))).length + ' bytes)');
    expect(lines).toContain('purge /collections/geonames/datasets/cities/');
    expect(await bucket.keys(PREFIX)).toEqual(keys);
    expect(await bucket.read(`${PREFIX}/manifest.json`)).toEqual(manifest);
  }, 120_000);

  it('leaves the old manifest when killed half way, and a second run converges', async () => {
    const old = await bucket.read(`${PREFIX}/manifest.json`);
    const env = childEnvironment(config, { ...bucket.env, GEOSHELF_CACHE_MAX_AGE: '300' });
    // Every object again, one at a time, so the first progress line comes long before the end.
    const first = runScript(['deploy/publish.ts', `s3://${bucket.bucket}/${PREFIX}`, '--all', '--concurrency', '1'], env);
    await first.waitFor(/uploaded \d+ of \d+ objects/, 60_000);
    first.child.kill('SIGKILL');
    await first.exitCode();
    expect(first.output()).not.toMatch(/URLs to purge/);
    expect(await bucket.read(`${PREFIX}/manifest.json`)).toEqual(old);
    const during = JSON.parse(old!.toString()) as Manifest;
    const present = new Set(await bucket.keys(PREFIX));
    expect(expectedKeys(during).filter((key) => !present.has(key))).toEqual([]);
    expect(present.has(`${PREFIX}/${MARKER_KEY}`)).toBe(true);

    const second = runScript(['deploy/publish.ts', `s3://${bucket.bucket}/${PREFIX}`, '--invalidations', join(config.root, 'purge-2.json')], env);
    expect(await second.exitCode()).toBe(0);
    expect(second.output()).toMatch(/stopped half way/);
    expect(treeFiles(await bucketManifest())).toEqual((await readManifest(config.distDir))!.files);
    expect(await bucket.keys(PREFIX)).toEqual(expectedKeys(await bucketManifest()));
    expect(JSON.parse(await readFile(join(config.root, 'purge-2.json'), 'utf8'))).toContain('/collections/geonames/datasets/cities/');
    const third = await publishTree();
    expect(third.summary).toMatchObject({ uploaded: 0, deleted: 0 });
  }, 180_000);

  it('after a run killed between the manifest and the deletions, removes the leftovers and still lists their URLs', async () => {
    await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: `${PREFIX}/collections/gone/index.html`, Body: 'old page' }));
    await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: `${PREFIX}/${MARKER_KEY}`, Body: JSON.stringify({ started: '2026-11-27T00:00:00Z', invalidations: ['/collections/gone/'] }) }));
    const { summary } = await publishTree();
    expect(summary.deleted).toBe(1);
    expect(summary.invalidations).toContain('/collections/gone/');
    expect(await bucket.keys(PREFIX)).toEqual(expectedKeys(await bucketManifest()));
  }, 60_000);
});

describe('publish errors are one clear line without secrets', () => {
  const cases: [string, (env: Record<string, string>) => { target: string; env: Record<string, string> }, RegExp][] = [
    ['keys the store does not know', (env) => ({ target: `s3://${bucket.bucket}/${PREFIX}`, env: { ...env, AWS_ACCESS_KEY_ID: 'AKIAUNKNOWN', AWS_SECRET_ACCESS_KEY: 'not-the-secret-0123456789' } }), /access denied .* s3:\/\/geoshelf-site\/site\/v1/],
    ['a bucket that does not exist', (env) => ({ target: 's3://no-such-bucket/x', env }), /the bucket no-such-bucket does not exist/],
    ['a prefix that holds something else', (env) => ({ target: `s3://${bucket.bucket}/other`, env }), /holds objects but no geoshelf manifest\.json/],
    ['a target that is not s3://', (env) => ({ target: 'http://example.org/x', env }), /the target must be s3:\/\/BUCKET/],
    ['a store that is not there', (env) => ({ target: `s3://${bucket.bucket}/x`, env: { ...env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' } }), /cannot reach the object store at http:\/\/127\.0\.0\.1:9/],
  ];

  beforeAll(async () => {
    await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: 'other/photo.jpg', Body: 'not geoshelf' }));
  });

  it.each(cases)('%s', async (_name, make, message) => {
    const { target, env } = make(bucket.env);
    const run = runScript(['deploy/publish.ts', target], childEnvironment(config, env));
    expect(await run.exitCode()).toBe(1);
    const output = run.output().trim();
    expect(output).toMatch(message);
    expect(output.split('\n').filter((line) => line.startsWith('publish:'))).toHaveLength(1);
    for (const secret of [env.AWS_SECRET_ACCESS_KEY!, 'not-the-secret']) expect(output).not.toContain(secret);
    expect(await bucket.keys('other/')).toEqual(['other/photo.jpg']);
  }, 120_000);

  it('names the missing build', async () => {
    const empty = await makeTempDir();
    const run = runScript(['deploy/publish.ts', `s3://${bucket.bucket}/${PREFIX}`], childEnvironment({ ...config, distDir: empty }, bucket.env));
    expect(await run.exitCode()).toBe(1);
    expect(run.output()).toMatch(/holds no built tree .*run npm run build first/);
    await rm(empty, { recursive: true, force: true });
  });

  it('answers --help with the usage', async () => {
    const run = runScript(['deploy/publish.ts', '--help'], childEnvironment(config));
    expect(await run.exitCode()).toBe(0);
    expect(run.output()).toMatch(/^Usage: geoshelf publish \[options\] <target>$/m);
    expect(run.output()).toMatch(/^ {2}target +s3:\/\/BUCKET\[\/PREFIX\]$/m);
  });
});

describe('a file over the multipart size', () => {
  it('goes up in parts, and reads back as the same bytes with its headers', async () => {
    const dir = await makeTempDir();
    const file = join(dir, 'large.pmtiles');
    const bytes = randomBytes(MULTIPART_BYTES + 1024 * 1024);
    await writeFile(file, bytes);
    // The store's requests pass through a proxy that records them: s3rver's ETags do not tell a multipart object.
    const requests: string[] = [];
    const target = new URL(bucket.endpoint);
    const proxy = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      request.pipe(httpRequest({ host: target.hostname, port: target.port, path: request.url, method: request.method, headers: request.headers }, (answer) => {
        response.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(response);
      }));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const store = new ObjectStore(parseTarget(`s3://${bucket.bucket}/large`), { ...bucket.env, AWS_ENDPOINT_URL: endpoint });
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await store.put({ key: 'data/large.pmtiles', file, bytes: bytes.length, contentType: 'application/vnd.pmtiles', cacheControl: 'public, max-age=300', metadata: { sha256 } });
    proxy.close();
    expect(requests.filter((line) => /^PUT .*[?&]partNumber=/.test(line)).length).toBeGreaterThanOrEqual(2);
    expect(requests.filter((line) => /^POST .*[?&]uploadId=/.test(line))).toHaveLength(1);
    const head = await bucket.head('large/data/large.pmtiles');
    expect(head).toMatchObject({ ContentLength: bytes.length, ContentType: 'application/vnd.pmtiles', CacheControl: 'public, max-age=300', Metadata: { sha256 } });
    expect(createHash('sha256').update((await bucket.read('large/data/large.pmtiles'))!).digest('hex')).toBe(sha256);
    await rm(dir, { recursive: true, force: true });
  }, 120_000);
});

describe('the publish plan', () => {
  const entry = (sha256: string, siblings = true) => ({ sha256, bytes: 2000, type: 'application/json', ...(siblings ? { br: 500, gz: 600 } : {}) });
  const manifest = (files: Manifest['files']): Manifest => ({ format: 'geoshelf-manifest/1', settings: { base_url: 'https://x.org', storage_base_url: 'https://x.org/data' }, files });

  it('deletes the siblings of a file that no longer has them, and keeps the file', () => {
    const plan = planPublish(manifest({ 'a/index.json': { ...entry('2', false), bytes: 900 } }), manifest({ 'a/index.json': entry('1') }), { maxAge: 300 });
    expect(plan.upload.map((object) => object.key)).toEqual(['a/index.json']);
    expect(plan.remove).toEqual(['a/index.json.br', 'a/index.json.gz']);
  });

  it('uploads a changed file with its siblings, each with its encoding, and deletes a dropped one with its own', () => {
    const plan = planPublish(manifest({ 'a/index.json': entry('2') }), manifest({ 'a/index.json': entry('1'), 'b/index.json': entry('3') }), { maxAge: 60 });
    expect(plan.upload.map((object) => [object.key, object.contentEncoding ?? '', object.cacheControl])).toEqual([
      ['a/index.json', '', 'public, max-age=60'], ['a/index.json.br', 'br', 'public, max-age=60'], ['a/index.json.gz', 'gzip', 'public, max-age=60'],
    ]);
    expect(plan.remove).toEqual(['b/index.json', 'b/index.json.br', 'b/index.json.gz']);
    expect(plan.changedEntries).toEqual(['a/index.json', 'b/index.json']);
  });

  it.each([
    ['index.html', '/'],
    ['collections/geonames/index.html', '/collections/geonames/'],
    ['api/index.json', '/api'],
    ['api/collections/geonames/_query/tag_filters=categories%3Acities.json', '/api/collections/geonames?tag_filters=categories%3Acities'],
    ['stac/geonames/cities/cities/versions/3 beta/index.json', '/stac/geonames/cities/cities/versions/3%20beta'],
    ['.well-known/api-catalog/index.json', '/.well-known/api-catalog'],
    ['data/geonames/cities/3.1.0/cities-1000.parquet', '/data/geonames/cities/3.1.0/cities-1000.parquet'],
    ['llms.txt', '/llms.txt'],
  ])('purges %s as %s', (key, url) => {
    expect(urlsOfKey(key)).toEqual([url]);
  });
});
