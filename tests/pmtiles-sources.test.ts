import { copyFile, mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { PMTiles } from 'pmtiles';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeTile } from '../core/geo/mvt.ts';
import { writePmTiles } from '../runtime/pmtiles.ts';
import { encodeWkb } from '../core/geo/wkb.ts';
import { buildCatalog } from '../generator/build.ts';
import { BuildError } from '../generator/errors.ts';
import { makeTempCatalog, ROOT, snapshotTree } from './helpers/catalog.ts';
import { PmTilesFileSource } from '../runtime/pmtiles-file-source.ts';
import { get, sampleServer } from './helpers/sample.ts';

/** A one-file catalog whose file has one `pmtiles` source, `tiles/world.pmtiles` in its own data folder. */
async function pmtilesCatalog() {
  const { config, dataDir } = await makeTempCatalog({
    'formats.yaml': '- slug: pmtiles\n  format_type: pmtiles\n  name: PMTiles v3\n  mime_type: application/vnd.pmtiles\n',
    'datasets/world.yaml': ['slug: world', 'collection: maps', 'name: World', 'files:', '  - slug: world', '    name: World', '    formats:', '      - format: pmtiles', '        sources:', '          - version: 1', '            path: tiles/world.pmtiles', ''].join('\n'),
  });
  await mkdir(join(dataDir, 'tiles'), { recursive: true });
  return { config, archive: join(dataDir, 'tiles/world.pmtiles') };
}

describe('a PMTiles source', () => {
  it('gets the bounds of its archive, and a broken archive fails the build with the reason, leaving dist/ as it was', async () => {
    const { config, archive } = await pmtilesCatalog();
    const tile = encodeTile([{ wkb: encodeWkb({ type: 'Point', coordinates: [10, 20] }), properties: { name: 'x' } }], 0, 0, 0, { layerName: 'world', maxFeatures: 1 }).bytes;
    await writePmTiles(archive, [{ z: 0, x: 0, y: 0, bytes: tile }], { minZoom: 0, maxZoom: 0, bounds: [10, 20, 10, 20], center: [10, 20, 0], metadata: {} });
    await buildCatalog({ config });
    const detail = JSON.parse(await readFile(join(config.distDir, 'api/collections/maps/datasets/world/files/world/index.json'), 'utf8'));
    expect(detail.file.formats[0].sources[0].source_metadata.bounds).toEqual([10, 20, 10, 20]);
    const before = await snapshotTree(config.distDir);

    const bytes = await readFile(archive);
    for (const [edit, reason] of [
      [(copy: Buffer) => copy.writeUInt8(2, 7), /spec version 2/],
      [(copy: Buffer) => copy.write('PNG', 0, 'ascii'), /does not start with "PMTiles"/],
      [(copy: Buffer) => copy.writeBigUInt64LE(BigInt(bytes.length * 2), 24), /metadata ends at byte .* past the end/],
    ] as const) {
      const copy = Buffer.from(bytes);
      edit(copy);
      await writeFile(archive, copy);
      const error = await buildCatalog({ config }).then(() => undefined, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(BuildError);
      const issues = (error as BuildError).issues;
      expect(issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.path}`)).toEqual(['UnreadablePmTiles datasets/world.yaml:11 files[0].formats[0].sources[0].path']);
      expect(issues[0]!.message).toMatch(reason);
      expect(issues[0]!.message).toContain('"tiles/world.pmtiles" is not a readable PMTiles archive');
    }
    const after = await snapshotTree(config.distDir);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, file] of after) expect(file.bytes.equals(before.get(path)!.bytes), path).toBe(true);
  });
});

/**
 * A one-file catalog whose file has one GeoParquet source, `places/capitals.parquet` (a copy of the sample's
 * national capitals), and a `pmtiles` format in formats.yaml, so the build gives it a twin.
 */
async function twinCatalog() {
  const { config, dataDir } = await makeTempCatalog({
    'formats.yaml': await readFile(join(ROOT, 'catalog-data/formats.yaml'), 'utf8'),
    'datasets/places.yaml': ['slug: places', 'collection: maps', 'name: Places', 'files:', '  - slug: capitals', '    name: Capitals', '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1', '            path: places/capitals.parquet', ''].join('\n'),
  }, { 'places/capitals.parquet': join(ROOT, 'catalog-data/data/geonames/national-capitals/3.1.0/national-capitals.parquet') });
  const detail = async () => JSON.parse(await readFile(join(config.distDir, 'api/collections/maps/datasets/places/files/capitals/index.json'), 'utf8')) as { file: { formats: { format: { format_type: string }; sources: Source[] }[] } };
  return { config, parquet: join(dataDir, 'places/capitals.parquet'), twin: join(dataDir, 'places/capitals.pmtiles'), detail };
}

interface Source {
  id: number;
  version: string;
  url: string;
  references_source_id: number | null;
  source_metadata: { feature_count: number; bounds: number[]; mime_type: string; description: string };
}

function sourceOf(document: Awaited<ReturnType<Awaited<ReturnType<typeof twinCatalog>>['detail']>>, type: string): Source | undefined {
  return document.file.formats.find((format) => format.format.format_type === type)?.sources[0];
}

describe('the PMTiles twin of a GeoParquet source', () => {
  it('is made beside it by the build and catalogued as a pmtiles source of the same version that refers to it', async () => {
    const { config, twin, detail } = await twinCatalog();
    await buildCatalog({ config });
    const document = await detail();
    const parquet = sourceOf(document, 'geoparquet')!;
    const tiles = sourceOf(document, 'pmtiles')!;
    expect(tiles.version).toBe(parquet.version);
    expect(tiles.references_source_id).toBe(parquet.id);
    expect(tiles.url).toBe('https://catalog.example.org/data/places/capitals.pmtiles');
    expect(tiles.source_metadata.mime_type).toBe('application/vnd.pmtiles');
    expect(tiles.source_metadata.feature_count).toBe(parquet.source_metadata.feature_count);
    // The archive's bounds are the data's, to the precision PMTiles keeps (1e-7 degrees).
    tiles.source_metadata.bounds.forEach((value, index) => expect(value).toBeCloseTo(parquet.source_metadata.bounds[index]!, 5));

    const archive = new PMTiles(new PmTilesFileSource(twin));
    const metadata = (await archive.getMetadata()) as { vector_layers: { id: string }[]; geoshelf: { features: number } };
    expect(metadata.vector_layers.map((layer) => layer.id)).toEqual(['capitals']);
    expect(metadata.geoshelf.features).toBe(parquet.source_metadata.feature_count);
    expect(await archive.getZxy(0, 0, 0)).toBeDefined();
  });

  it('is made again only when its GeoParquet file changes', async () => {
    const { config, parquet, twin, detail } = await twinCatalog();
    await buildCatalog({ config });
    const first = await stat(twin);
    const result = await buildCatalog({ config });
    expect(result.dataFilesRead).toBe(0);
    const second = await stat(twin);
    expect([second.ino, second.mtimeMs]).toEqual([first.ino, first.mtimeMs]);

    await copyFile(join(ROOT, 'catalog-data/data/us-census/us-state-capitals/3.1.0/us-state-capitals.parquet'), parquet);
    await buildCatalog({ config });
    const tiles = sourceOf(await detail(), 'pmtiles')!;
    const states = sourceOf(await detail(), 'geoparquet')!;
    expect(tiles.source_metadata.feature_count).toBe(states.source_metadata.feature_count);
    expect((await stat(twin)).mtimeMs).toBeGreaterThan(first.mtimeMs);
    // The United States' capitals lie west of 60°W, the world's reached 170°E.
    expect(tiles.source_metadata.bounds[2]).toBeLessThan(-60);
  });

  it('names its layer after its file, so another catalog over the same data folder finds it current; a twin named otherwise is made again', async () => {
    const { config, parquet, twin } = await twinCatalog();
    const layerOf = async (path: string) => ((await new PMTiles(new PmTilesFileSource(path)).getMetadata()) as { vector_layers: { id: string }[] }).vector_layers[0]!.id;
    const records = join(config.catalogDir, 'datasets/places.yaml');
    await writeFile(records, (await readFile(records, 'utf8')).replace('slug: capitals', 'slug: world-capitals'));
    await buildCatalog({ config });
    expect(await layerOf(twin)).toBe('capitals');
    const made = await stat(twin);
    // Another catalog calling the same file something else: the archive is already what it would make.
    await writeFile(records, (await readFile(records, 'utf8')).replace('slug: world-capitals', 'slug: seats-of-government'));
    await buildCatalog({ config });
    expect([(await stat(twin)).ino, (await stat(twin)).mtimeMs]).toEqual([made.ino, made.mtimeMs]);
    // Both files moved to a new name by hand: the twin's stamp still matches its data, but its layer is not the file's.
    await rename(parquet, join(dirname(parquet), 'capitals-2024.parquet'));
    await rename(twin, join(dirname(twin), 'capitals-2024.pmtiles'));
    await writeFile(records, (await readFile(records, 'utf8')).replace('places/capitals.parquet', 'places/capitals-2024.parquet'));
    await buildCatalog({ config });
    expect(await layerOf(join(dirname(twin), 'capitals-2024.pmtiles'))).toBe('capitals-2024');
  });

  it('never overwrites a file it did not make: the build fails with TwinPathTaken and leaves dist/ as it was', async () => {
    const { config, twin } = await twinCatalog();
    await buildCatalog({ config });
    const before = await snapshotTree(config.distDir);
    await writeFile(twin, 'a steward\'s own file');
    const error = await buildCatalog({ config }).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(BuildError);
    const issues = (error as BuildError).issues;
    expect(issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.path}`)).toEqual(['TwinPathTaken datasets/places.yaml:11 files[0].formats[0].sources[0].path']);
    expect(issues[0]!.message).toContain('"places/capitals.pmtiles"');
    expect(await readFile(twin, 'utf8')).toBe('a steward\'s own file');
    const after = await snapshotTree(config.distDir);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
  });
});

describe('the sample\'s PMTiles twins', () => {
  it('are one per GeoParquet file, and the pmtiles package reads each: header, metadata, and a zoom-0 tile of features', async () => {
    const dataDir = join(ROOT, 'catalog-data/data');
    const files = (await readdir(dataDir, { recursive: true })).map(String);
    const parquet = files.filter((file) => file.endsWith('.parquet')).sort();
    const twins = files.filter((file) => file.endsWith('.pmtiles')).sort();
    expect(twins).toEqual(parquet.map((file) => file.replace(/\.parquet$/, '.pmtiles')));
    for (const twin of twins) {
      const archive = new PMTiles(new PmTilesFileSource(join(dataDir, twin)));
      const header = await archive.getHeader();
      const metadata = (await archive.getMetadata()) as { vector_layers: { id: string }[]; geoshelf: { features: number } };
      expect(header.tileType, twin).toBe(1);
      expect(metadata.geoshelf.features, twin).toBeGreaterThan(0);
      const tile = await archive.getZxy(0, 0, 0);
      const layer = new VectorTile(new PbfReader(new Uint8Array(tile!.data))).layers[metadata.vector_layers[0]!.id];
      expect(layer?.length, twin).toBeGreaterThan(0);
    }
  });

  describe('under /data', () => {
    it('are served by byte ranges with their media type, so the pmtiles reader gets a tile as over object storage', async () => {
      const server = sampleServer();
      const path = '/data/natural-earth/countries/2.0.2/countries-110m.pmtiles';
      const head = await get(server, path, { range: 'bytes=0-126' });
      expect(head.status).toBe(206);
      expect(head.headers.get('content-type')).toBe('application/vnd.pmtiles');
      expect(head.headers.get('accept-ranges')).toBe('bytes');
      const source = {
        getKey: () => path,
        getBytes: async (offset: number, length: number) => {
          const response = await get(server, path, { range: `bytes=${offset}-${offset + length - 1}` });
          expect(response.status).toBe(206);
          return { data: await response.arrayBuffer() };
        },
      };
      const archive = new PMTiles(source);
      expect((await archive.getHeader()).tileType).toBe(1);
      const tile = await archive.getZxy(0, 0, 0);
      expect(tile?.data.byteLength).toBeGreaterThan(1000);
    });
  });
});
