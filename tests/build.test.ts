import { cp, readdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { readManifest, readManifestRoot, serializeManifest } from '../runtime/manifest.ts';
import { buildCatalog, loadCatalogModel } from '../generator/build.ts';
import { datasetPart, readModel, readModelRoot, readModelSlices } from '../runtime/model-file.ts';
import { runAtOnce } from '../core/slices.ts';
import { createServer } from '../server/app.ts';
import { BuildError } from '../generator/errors.ts';
import { readLedger } from '../generator/model/ledger.ts';
import { makeTempCatalog, makeTestConfig, ROOT, snapshotTree } from './helpers/catalog.ts';

const LAND = 'datasets/natural-earth/land.yaml';

describe('builds', () => {
  it('give identical manifests and identical bytes from the same inputs', async () => {
    const first = await makeTestConfig();
    const second = await makeTestConfig();
    await buildCatalog({ config: first });
    await buildCatalog({ config: { ...second, catalogDir: first.catalogDir } });
    const manifestA = await readFile(join(first.distDir, 'manifest.json'), 'utf8');
    const manifestB = await readFile(join(second.distDir, 'manifest.json'), 'utf8');
    expect(manifestA).toBe(manifestB);
    const treeA = await snapshotTree(first.distDir);
    const treeB = await snapshotTree(second.distDir);
    expect([...treeA.keys()].sort()).toEqual([...treeB.keys()].sort());
    for (const [path, file] of treeA) expect(file.bytes.equals(treeB.get(path)!.bytes), path).toBe(true);
  });

  it('give every file of 1 KB or more brotli and gzip siblings, listed in the manifest', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const manifest = (await readManifest(config.distDir))!;
    const tree = await snapshotTree(config.distDir);
    for (const [key, entry] of Object.entries(manifest.files)) {
      expect(tree.get(key)?.bytes.length, key).toBe(entry.bytes);
      // Parquet is compressed already: a sibling would be as large.
      const compressible = entry.bytes >= 1024 && entry.type !== 'application/vnd.apache.parquet';
      expect(tree.has(`${key}.br`), key).toBe(compressible);
      expect(tree.has(`${key}.gz`), key).toBe(compressible);
      if (entry.br !== undefined) expect(tree.get(`${key}.br`)!.bytes.length).toBe(entry.br);
    }
  });

  it('rewrite only the files that depend on an edited dataset', async () => {
    const config = await makeTestConfig();
    const first = await buildCatalog({ config });
    expect(first.mode).toBe('full');
    const before = await snapshotTree(config.distDir);
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace(/^description: >-\n/m, 'description: >-\n  Edited for the test.\n'));
    const second = await buildCatalog({ config });
    expect(second.mode).toBe('incremental');
    expect(second.written).toContain('api/collections/natural-earth/datasets/land/index.json');
    const landId = JSON.parse(await readFile(join(config.distDir, 'api/collections/natural-earth/datasets/land/index.json'), 'utf8')).dataset.id;
    const dependent = (key: string) =>
      key.startsWith('api/collections/natural-earth/datasets/land/') ||
      key === `api/datasets/${landId}/index.json` ||
      /^api\/collections\/natural-earth\/(index\.json|_query\/)/.test(key) ||
      // Its pages: the dataset's own, and the collection's listings that show its description.
      key === 'collections/natural-earth/datasets/land/index.html' ||
      /^collections\/natural-earth\/(tags\/[^/]+\/[^/]+\/)?(page\/\d+\/)?index\.html$/.test(key) ||
      // The full-text index holds its description.
      key.startsWith('_site/search/') ||
      // Its STAC Collection, its collection's DCAT page, the feeds that show its description, and the datasets download.
      key === 'stac/natural-earth/land/index.json' ||
      key === 'dcat/natural-earth.jsonld' ||
      key === 'collections/natural-earth/feed.atom' || key === 'feed.atom' ||
      key === 'downloads/datasets.parquet';
    expect(second.written.filter((key) => !dependent(key))).toEqual([]);
    expect(second.written).toContain('collections/natural-earth/datasets/land/index.html');
    expect(second.written).not.toContain('collections/natural-earth/datasets/land/files/land-110m/index.html');
    expect(second.written).not.toContain('index.html');
    expect(second.written).not.toContain('api/collections/natural-earth/_query/omit=description.json');
    const after = await snapshotTree(config.distDir);
    const rewritten = new Set(second.written.flatMap((key) => [key, `${key}.br`, `${key}.gz`]));
    for (const [path, file] of after) {
      if (rewritten.has(path) || path === 'manifest.json' || path.startsWith('_geoshelf/')) continue;
      expect({ path, ino: file.ino, mtimeMs: file.mtimeMs }).toEqual({ path, ino: before.get(path)?.ino, mtimeMs: before.get(path)?.mtimeMs });
    }
    expect(after.get('api/collections/natural-earth/datasets/land/index.json')!.bytes.toString()).toContain('Edited for the test.');
  });

  it('keep the manifest in parts: an edit rewrites the root and the parts it touches, and leaves no part behind', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const root = async () => (await readManifestRoot(config.distDir))!;
    const partFiles = async () => (await readdir(join(config.distDir, '_geoshelf/manifest'))).sort();
    const before = await root();
    expect(await partFiles()).toEqual(Object.values(before.parts).map((part) => `${part.sha256}.json`).sort());
    const whole = (await readManifest(config.distDir))!;
    expect(Object.keys(whole.files).length).toBe(Object.values(before.parts).reduce((sum, part) => sum + part.files, 0));
    // The root names parts, not files: it stays small whatever the tree holds.
    expect((await readFile(join(config.distDir, 'manifest.json'))).length).toBeLessThan(serializeManifest(whole).length / 20);
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace(/^description: >-\n/m, 'description: >-\n  Edited for the parts.\n'));
    await buildCatalog({ config });
    const after = await root();
    const changed = Object.keys(after.parts).filter((name) => after.parts[name]!.sha256 !== before.parts[name]?.sha256).sort();
    const landId = (await readLedger(join(config.catalogDir, 'ledger.json'))).ids.dataset['natural-earth/land']![0]!;
    expect(changed).toEqual([`datasets-${Math.floor(landId / 128)}`, 'collection-natural-earth', 'full-text', 'global', 'downloads'].sort());
    expect(await partFiles()).toEqual(Object.values(after.parts).map((part) => `${part.sha256}.json`).sort());
    const edited = (await readManifest(config.distDir))!;
    expect(Object.keys(edited.files).sort()).toEqual(Object.keys(whole.files).sort());
    const key = 'api/collections/natural-earth/datasets/land/index.json';
    expect(edited.files[key]!.sha256).toBe(createHash('sha256').update(await readFile(join(config.distDir, key))).digest('hex'));
    expect(edited.files[key]!.sha256).not.toBe(whole.files[key]!.sha256);
  });

  // A kept part is not read, so its size is what is checked; a part the edit touches is read and its hash checked.
  it.each([
    ['missing', 'collection-geonames', (): string | undefined => undefined],
    ['of another size', 'collection-geonames', (text: string | undefined) => `${text} `],
    ['changed in place', 'collection-natural-earth', (text: string | undefined) => text!.replace(/"sha256":"(.)/, (_, first: string) => `"sha256":"${first === '0' ? '1' : '0'}`)],
  ])('write a whole new tree when a part of the manifest is %s', async (_, name, spoil) => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const whole = (await readManifest(config.distDir))!;
    const path = join(config.distDir, '_geoshelf/manifest', `${(await readManifestRoot(config.distDir))!.parts[name]!.sha256}.json`);
    const spoiled = spoil(await readFile(path, 'utf8'));
    await (spoiled === undefined ? rm(path) : writeFile(path, spoiled));
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace(/^description: >-\n/m, 'description: >-\n  Edited.\n'));
    const rebuilt = await buildCatalog({ config });
    expect(rebuilt.mode).toBe('full');
    const after = (await readManifest(config.distDir))!;
    expect(Object.keys(after.files).sort()).toEqual(Object.keys(whole.files).sort());
    expect(after.files['api/collections/geonames/index.json']).toEqual(whole.files['api/collections/geonames/index.json']);
  });

  it('remove the files of a deleted dataset, and keep its id out of use', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const ledger = await readLedger(join(config.catalogDir, 'ledger.json'));
    const landId = ledger.ids.dataset['natural-earth/land']![0];
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await rm(join(config.catalogDir, LAND));
    const removal = await buildCatalog({ config });
    expect(removal.removed).toContain('api/collections/natural-earth/datasets/land/index.json');
    expect((await snapshotTree(config.distDir)).has('api/collections/natural-earth/datasets/land/index.json')).toBe(false);
    await writeFile(join(config.catalogDir, 'datasets/natural-earth/land-again.yaml'), record.replace('slug: land', 'slug: land-again'));
    await buildCatalog({ config });
    const after = await readLedger(join(config.catalogDir, 'ledger.json'));
    expect(after.ids.dataset['natural-earth/land']![0]).toBe(landId);
    expect(after.ids.dataset['natural-earth/land-again']![0]).toBe(ledger.next.dataset);
  });
});

describe('a running server', () => {
  it('picks up a new build without a restart, and keeps the old one when the new one fails', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const server = createServer({ config });
    const description = async () => (await (await server.fetch(new Request('http://x/api/collections/natural-earth/datasets/land'))).json()).dataset.description as string;
    expect(await description()).not.toContain('Rebuilt');
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace(/^description: >-\n/m, 'description: >-\n  Rebuilt.\n'));
    await buildCatalog({ config });
    expect(await server.reload()).toBe(true);
    expect(await description()).toContain('Rebuilt.');
    await writeFile(join(config.catalogDir, LAND), 'slug: [broken');
    await expect(buildCatalog({ config })).rejects.toBeInstanceOf(BuildError);
    expect(await server.reload()).toBe(false);
    expect(await description()).toContain('Rebuilt.');
    await server.close();
  });

  it('takes over on a reload the bodies the new build did not change, without reading them again', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const server = createServer({ config });
    const home = () => server.fetch(new Request('http://x/'));
    const before = await (await home()).text();
    // The home page is now only in the server's memory; a new build that leaves it unchanged keeps it there.
    for (const suffix of ['', '.br', '.gz']) await rm(join(config.distDir, `index.html${suffix}`), { force: true });
    const later = new Date(Date.now() + 5000);
    await utimes(join(config.distDir, 'manifest.json'), later, later);
    expect(await server.reload()).toBe(true);
    const after = await home();
    expect(after.status).toBe(200);
    expect(await after.text()).toBe(before);
    await server.close();
  });
});

describe('a server reload after an edit', () => {
  it('answers from the previous build while it loads the new one, then from the new one', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const server = createServer({ config, reloadSliceMs: 0 });
    const description = async () => (await (await server.fetch(new Request('http://x/api/collections/natural-earth/datasets/land'))).json()).dataset.description as string;
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace(/^description: >-\n/m, 'description: >-\n  Sliced.\n'));
    await buildCatalog({ config });
    let settled = false;
    const reloaded = server.reload().finally(() => (settled = true));
    const during: string[] = [];
    while (!settled) {
      during.push(await description());
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await reloaded).toBe(true);
    expect(during.length).toBeGreaterThan(1);
    expect(during.every((text) => !text.includes('Sliced.'))).toBe(true);
    expect(await description()).toContain('Sliced.');
    await server.close();
  });

  it('takes over the manifest parts the build did not rewrite, and reads the new ones', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const server = createServer({ config });
    const partOf = (name: string) => readManifestRoot(config.distDir).then((root) => root!.parts[name]!.sha256);
    const geonames = await partOf('collection-geonames');
    const before = server.snapshot().manifestParts;
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace(/^description: >-\n/m, 'description: >-\n  Reloaded.\n'));
    await buildCatalog({ config });
    expect(await server.reload()).toBe(true);
    const after = server.snapshot().manifestParts;
    expect(await partOf('collection-geonames')).toBe(geonames);
    expect(after.get(geonames)).toBe(before.get(geonames));
    const naturalEarth = await partOf('collection-natural-earth');
    expect(before.has(naturalEarth)).toBe(false);
    expect(Object.keys(after.get(naturalEarth)!.scopes)).toEqual(['collection:natural-earth']);
    const answer = await server.fetch(new Request('http://x/api/collections/natural-earth/datasets/land'));
    expect((await answer.json()).dataset.description).toContain('Reloaded.');
    await server.close();
  });

  it('searches the edited file by its new name in STAC, and the others as before', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const server = createServer({ config });
    // In rank order: a word of a file's own name ranks its Item above the dataset's other files.
    const search = async (q: string) => ((await (await server.fetch(new Request(`http://x/stac/api/search?q=${q}&limit=100`))).json()).features as { id: string }[]).map((item) => item.id);
    const cities = await search('cities');
    expect(await search('zanzibarish')).toEqual([]);
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace('name: Land, 1:110 million', 'name: Land, 1:110 million zanzibarish'));
    await buildCatalog({ config });
    expect(await server.reload()).toBe(true);
    const found = await search('zanzibarish');
    expect(found[0]).toBe('land-110m');
    expect(found.toSorted()).toEqual(['land-10m', 'land-110m', 'land-50m']);
    expect(await search('cities')).toEqual(cities);
    await server.close();
  });
});

describe('caches', () => {
  it('skip a build whose inputs are those of the last one, and say what it kept', async () => {
    const config = await makeTestConfig();
    const first = await buildCatalog({ config });
    const lines: string[] = [];
    const second = await buildCatalog({ config, log: (line) => lines.push(line) });
    expect(lines.filter((line) => line.startsWith('nothing changed since the last build'))).toHaveLength(1);
    expect(lines.some((line) => line.startsWith('loaded '))).toBe(false);
    expect(second.skipped).toBe(true);
    expect(second.written).toEqual([]);
    expect(second.documents).toBe(first.documents);
    expect(second.warnings).toEqual(first.warnings);
    expect(second.twins).toEqual({ made: 0, current: first.twins.made + first.twins.current });
  });

  it('build again when a record is touched, a setting changes, the tree is not the one written, or --full is asked', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const rebuild = async (options: Partial<Parameters<typeof buildCatalog>[0]> = {}) => {
      const lines: string[] = [];
      const result = await buildCatalog({ config, ...options, log: (line) => lines.push(line) });
      expect(lines.some((line) => line.startsWith('nothing changed')), JSON.stringify(options)).toBe(false);
      expect(result.skipped).toBe(false);
      return result;
    };
    const later = new Date(Date.now() + 5000);
    await utimes(join(config.catalogDir, LAND), later, later);
    expect((await rebuild()).written).toEqual([]);
    const moved = await rebuild({ config: { ...config, baseUrl: 'https://moved.example' } });
    expect(moved.written.length).toBeGreaterThan(100);
    expect(await readFile(join(config.distDir, 'api/index.json'), 'utf8')).toContain('https://moved.example');
    expect((await rebuild({ config: { ...config, baseUrl: 'https://moved.example' }, full: true })).mode).toBe('full');
    const root = readModelRoot(config.distDir)!;
    await rm(join(config.distDir, '_geoshelf', `model/${Object.values(root.parts)[0]!.sha256}.json`));
    await rebuild({ config: { ...config, baseUrl: 'https://moved.example' } });
    expect(readModelRoot(config.distDir)).toBeDefined();
  });

  it('read only the record files whose size or time changed since the last build', async () => {
    const config = await makeTestConfig();
    // Files written a moment ago could change again within their mtime's resolution: those are always read.
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const entry of await readdir(config.catalogDir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) await utimes(join(entry.parentPath, entry.name), hourAgo, hourAgo);
    }
    const loadedLine = async () => {
      const lines: string[] = [];
      await buildCatalog({ config, log: (line) => lines.push(line) });
      return lines.find((line) => line.startsWith('loaded '))!;
    };
    const first = /^loaded (\d+) record files \((\d+) read/.exec(await loadedLine())!;
    expect(first[2]).toBe(first[1]);
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace(/^description: >-\n/m, 'description: >-\n  Read again.\n'));
    expect(await loadedLine()).toMatch(new RegExp(`^loaded ${first[1]} record files \\(1 read, `));
    const land = JSON.parse(await readFile(join(config.distDir, 'api/collections/natural-earth/datasets/land/index.json'), 'utf8'));
    expect(land.dataset.description).toContain('Read again.');
  });

  it('let a rebuild with unchanged data files read no data, and a changed file be read again', async () => {
    const config = await makeTestConfig();
    const first = await buildCatalog({ config });
    expect(first.dataFilesRead).toBeGreaterThan(20);
    const second = await buildCatalog({ config });
    expect(second.dataFilesRead).toBe(0);
    expect(second.written).toEqual([]);
    const data = join(config.root, 'data');
    await cp(config.dataDir, data, { recursive: true });
    const moved = { ...config, dataDir: data };
    expect((await buildCatalog({ config: moved })).dataFilesRead).toBe(0);
    const megacities = join(data, 'geonames/megacities/3.1.0/megacities.parquet');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(`COPY (SELECT * FROM read_parquet('${megacities}') LIMIT 10) TO '${megacities}.new' (FORMAT parquet)`);
    connection.closeSync();
    await rename(`${megacities}.new`, megacities);
    const changed = await buildCatalog({ config: moved });
    expect(changed.dataFilesRead).toBe(1);
    const file = JSON.parse(await readFile(join(config.distDir, 'api/collections/geonames/datasets/megacities/files/megacities/index.json'), 'utf8'));
    expect(file.file.file_metadata.feature_count).toBe(10);
  });

  it('read the model back the same with its equal strings made one, as the server does', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const plain = JSON.stringify(readModel(config.distDir).file);
    expect(JSON.stringify(runAtOnce(readModelSlices(config.distDir, undefined, { intern: true })).file)).toBe(plain);
  });

  it('store the model in parts that read back as the model, and rewrite only the part of an edited dataset', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const { model } = await loadCatalogModel({ config });
    const settings = { baseUrl: config.baseUrl, storageBaseUrl: config.storageBaseUrl };
    expect(JSON.stringify(readModel(config.distDir).file)).toBe(JSON.stringify({ settings, model }));
    const partFiles = async () => (await readdir(join(config.distDir, '_geoshelf/model'))).sort();
    const before = readModelRoot(config.distDir)!;
    expect(await partFiles()).toEqual(Object.values(before.parts).map((part) => `${part.sha256}.json`).sort());
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, LAND), record.replace(/^description: >-\n/m, 'description: >-\n  Edited for the model.\n'));
    await buildCatalog({ config });
    const after = readModelRoot(config.distDir)!;
    const landId = (await readLedger(join(config.catalogDir, 'ledger.json'))).ids.dataset['natural-earth/land']![0]!;
    expect(Object.keys(after.parts).filter((name) => after.parts[name]!.sha256 !== before.parts[name]!.sha256)).toEqual([datasetPart(landId)]);
    expect(await partFiles()).toEqual(Object.values(after.parts).map((part) => `${part.sha256}.json`).sort());
    const land = readModel(config.distDir).file.model.collections.flatMap((collection) => collection.datasets).find((dataset) => dataset.id === landId)!;
    expect(land.description).toContain('Edited for the model.');
  });
});

describe('the id ledger', () => {
  it('keeps every id when records are read in another order', async () => {
    const config = await makeTestConfig();
    const before = await readLedger(join(config.catalogDir, 'ledger.json'));
    const folder = join(config.catalogDir, 'datasets/natural-earth');
    const names = (await readdir(folder)).sort();
    for (const [index, name] of names.entries()) await rename(join(folder, name), join(folder, `${String(names.length - index).padStart(3, '0')}-${name}`));
    await buildCatalog({ config });
    const after = await readLedger(join(config.catalogDir, 'ledger.json'));
    expect(after).toEqual(before);
  });

  it('refuses new records when frozen, naming each one', async () => {
    const config = await makeTestConfig();
    const record = await readFile(join(config.catalogDir, LAND), 'utf8');
    await writeFile(join(config.catalogDir, 'datasets/natural-earth/new-land.yaml'), record.replace('slug: land', 'slug: new-land'));
    const error = await buildCatalog({ config: { ...config, ledgerMode: 'frozen' } }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(BuildError);
    const messages = (error as BuildError).issues.map((issue) => `${issue.code}: ${issue.message}`);
    expect(messages).toContain('LedgerFrozen: "natural-earth/new-land" has no id yet');
    expect(messages.every((message) => message.startsWith('LedgerFrozen'))).toBe(true);
  });

  it('gives records named like the properties of every object ids of their own', async () => {
    const { config } = await makeTempCatalog({
      'formats.yaml': await readFile(join(ROOT, 'catalog-data/formats.yaml'), 'utf8'),
      'collections/constructor.yaml': 'slug: constructor\nname: Constructor\n',
      'datasets/to-string.yaml': 'slug: to-string\ncollection: constructor\nname: toString\nfiles:\n  - slug: value-of\n    name: valueOf\n    formats:\n      - format: geojson\n        sources:\n          - version: "1"\n            api: { url: "https://service.example.org/items" }\n',
    });
    const { model, ids } = await loadCatalogModel({ config });
    const ours = model.collections.map((collection) => collection.id);
    expect(ours.every(Number.isInteger)).toBe(true);
    expect(new Set(ours).size).toBe(2);
    expect(ids.ledger.ids.collection['constructor']).toEqual([expect.any(Number), expect.any(String)]);
  });

  it('refuses a removal time that is not a time, or a removal of a key it never gave an id', async () => {
    const config = await makeTestConfig();
    const path = join(config.catalogDir, 'ledger.json');
    const ledger = JSON.parse(await readFile(path, 'utf8'));
    for (const [removed, at] of [[{ dataset: { 'natural-earth/land': 'yesterday' } }, 'removed.dataset.natural-earth/land'], [{ file: { 'natural-earth/sea': '2026-11-29T00:00:00' } }, 'removed.file.natural-earth/sea']] as const) {
      await writeFile(path, JSON.stringify({ ...ledger, removed }));
      const error = await readLedger(path).catch((thrown: unknown) => thrown);
      expect((error as BuildError).issues).toEqual([expect.objectContaining({ code: 'LedgerInvalid', path: at })]);
    }
  });

  it('reads the ledger\'s entries without a prototype, and refuses a next id too large to be true', async () => {
    const config = await makeTestConfig();
    const path = join(config.catalogDir, 'ledger.json');
    const ledger = JSON.parse(await readFile(path, 'utf8'));
    const read = await readLedger(path);
    expect(Object.keys(read.ids.dataset).length).toBeGreaterThan(0);
    expect(read.ids.dataset['constructor']).toBeUndefined();
    expect('toString' in read.ids.file).toBe(false);
    await writeFile(path, JSON.stringify({ ...ledger, next: { ...ledger.next, dataset: 2 ** 40 } }));
    const error = await readLedger(path).catch((thrown: unknown) => thrown);
    expect((error as BuildError).issues).toEqual([expect.objectContaining({ code: 'LedgerInvalid', path: 'next.dataset' })]);
  });
});
