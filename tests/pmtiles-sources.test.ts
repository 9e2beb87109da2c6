import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeTile } from '../core/geo/mvt.ts';
import { writePmTiles } from '../runtime/pmtiles.ts';
import { encodeWkb } from '../core/geo/wkb.ts';
import { buildCatalog } from '../generator/build.ts';
import { BuildError } from '../generator/errors.ts';
import { loadConfig } from '../runtime/config.ts';
import { makeTempDir, ROOT, snapshotTree } from './helpers/catalog.ts';

/** A one-file catalog whose file has one `pmtiles` source, `tiles/world.pmtiles` in its own data folder. */
async function pmtilesCatalog() {
  const root = await makeTempDir();
  const catalogDir = join(root, 'catalog');
  const dataDir = join(root, 'data');
  await mkdir(join(catalogDir, 'collections'), { recursive: true });
  await mkdir(join(catalogDir, 'datasets'), { recursive: true });
  await mkdir(join(dataDir, 'tiles'), { recursive: true });
  await copyFile(join(ROOT, 'catalog-data/storage-locations.yaml'), join(catalogDir, 'storage-locations.yaml'));
  await writeFile(join(catalogDir, 'formats.yaml'), '- slug: pmtiles\n  format_type: pmtiles\n  name: PMTiles v3\n  mime_type: application/vnd.pmtiles\n');
  await writeFile(join(catalogDir, 'collections/maps.yaml'), 'slug: maps\nname: Maps\n');
  await writeFile(join(catalogDir, 'datasets/world.yaml'), ['slug: world', 'collection: maps', 'name: World', 'files:', '  - slug: world', '    name: World', '    formats:', '      - format: pmtiles', '        sources:', '          - version: 1', '            path: tiles/world.pmtiles', ''].join('\n'));
  const config = loadConfig({}, { catalogDir, dataDir, distDir: join(root, 'dist'), cacheDir: join(root, 'cache'), baseUrl: 'https://catalog.example.org', buildConcurrency: 2 });
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
      expect(issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.path}`)).toEqual(['UnreadablePmTiles datasets/world.yaml:11 path']);
      expect(issues[0]!.message).toMatch(reason);
      expect(issues[0]!.message).toContain('"tiles/world.pmtiles" is not a readable PMTiles archive');
    }
    const after = await snapshotTree(config.distDir);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, file] of after) expect(file.bytes.equals(before.get(path)!.bytes), path).toBe(true);
  });
});
