import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { BuildError } from '../generator/errors.ts';
import { makeTempCatalog, ROOT, snapshotTree } from './helpers/catalog.ts';

const SAMPLE = join(ROOT, 'catalog-data/data/geonames/megacities/3.1.0');
const PARTS = ['shp', 'shx', 'dbf', 'prj', 'cpg'];

/**
 * A one-file catalog whose file has a shapefile source of version 2, `places/cities.shp` (the sample's
 * megacities), and a GeoJSON one of version 1, the same points.
 */
async function shapefileCatalog() {
  return makeTempCatalog({
    'formats.yaml': [
      '- slug: shapefile', '  format_type: shapefile', '  name: ESRI Shapefile', '  mime_type: application/x-esri-shape',
      '- slug: geojson', '  format_type: geojson', '  name: GeoJSON', '  mime_type: application/geo+json', '',
    ].join('\n'),
    'datasets/places.yaml': [
      'slug: places', 'collection: maps', 'name: Places', 'files:', '  - slug: cities', '    name: Cities', '    formats:',
      '      - format: shapefile', '        sources:', '          - version: 2', '            path: places/cities.shp',
      '      - format: geojson', '        sources:', '          - version: 1', '            path: places/cities.geojson', '',
    ].join('\n'),
  }, {
    ...Object.fromEntries(PARTS.map((part) => [`places/cities.${part}`, join(SAMPLE, `megacities.${part}`)])),
    'places/cities.geojson': join(SAMPLE, 'megacities.geojson'),
  });
}

interface Metadata {
  size_bytes: number;
  feature_count: number;
  geometry_type: string;
  bounds: number[];
  invalid_geometry_count: number;
  quality_check_passed: boolean;
}

async function metadataByFormat(distDir: string): Promise<Record<string, { source_metadata: Metadata }>> {
  const detail = JSON.parse(await readFile(join(distDir, 'api/collections/maps/datasets/places/files/cities/index.json'), 'utf8'));
  return Object.fromEntries(detail.file.formats.map((link: { format: { format_type: string }; sources: unknown[] }) => [link.format.format_type, link.sources[0]]));
}

async function failedBuild(config: Parameters<typeof buildCatalog>[0]['config']): Promise<BuildError> {
  const error = await buildCatalog({ config }).then(() => undefined, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(BuildError);
  return error as BuildError;
}

describe('a shapefile source', () => {
  it('gets its count, geometry type, bounds and validity from its own files, as the GeoJSON it was written from has them', async () => {
    const { config, dataDir } = await shapefileCatalog();
    await buildCatalog({ config });
    const { shapefile, geojson } = await metadataByFormat(config.distDir);
    const [shp, json] = [shapefile!.source_metadata, geojson!.source_metadata];
    expect(shp.feature_count).toBe(363);
    expect(shp.feature_count).toBe(json.feature_count);
    expect(shp.geometry_type).toBe('Point');
    shp.bounds.forEach((value, index) => expect(value).toBeCloseTo(json.bounds[index]!, 6));
    expect([shp.invalid_geometry_count, shp.quality_check_passed]).toEqual([0, true]);
    // Its size is its download's: every part together.
    let total = 0;
    for (const part of PARTS) total += (await readFile(join(dataDir, `places/cities.${part}`))).length;
    expect(shp.size_bytes).toBe(total);
    // The data dictionary of version 2, which only the shapefile has, is the .dbf's: field names cut to ten characters.
    const schema = JSON.parse(await readFile(join(config.distDir, 'api/collections/maps/datasets/places/files/cities/schema/index.json'), 'utf8')).schema;
    expect(schema.columns.map((column: { name: string }) => column.name)).toEqual(expect.arrayContaining(['feature_co', 'municipali', 'population']));
  });

  it('without its .prj is read as longitude/latitude, and the build says so', async () => {
    const { config, dataDir } = await shapefileCatalog();
    await rm(join(dataDir, 'places/cities.prj'));
    const { warnings } = await buildCatalog({ config }).catch((error: unknown) => {
      throw new Error(JSON.stringify((error as BuildError).issues ?? String(error)));
    });
    expect(warnings.filter((warning) => warning.startsWith('places/cities.shp:'))).toEqual(['places/cities.shp: it names no CRS (a shapefile without its .prj?), so its coordinates are taken as longitude/latitude']);
    expect((await metadataByFormat(config.distDir)).shapefile!.source_metadata.feature_count).toBe(363);
  });

  it('without its .shx fails the build with IncompleteShapefile at its line, and leaves dist/ as it was', async () => {
    const { config, dataDir } = await shapefileCatalog();
    await buildCatalog({ config });
    const before = await snapshotTree(config.distDir);
    await rm(join(dataDir, 'places/cities.shx'));
    const { issues } = await failedBuild(config);
    expect(issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.path}`)).toEqual(['IncompleteShapefile datasets/places.yaml:11 files[0].formats[0].sources[0].path']);
    expect(issues[0]!.message).toContain('"places/cities.shp" has no .shx beside it');
    const after = await snapshotTree(config.distDir);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, file] of after) expect(file.bytes.equals(before.get(path)!.bytes), path).toBe(true);
  });

  it('that GDAL cannot read fails the build with UnreadableDataFile and GDAL\'s reason, naming no path outside the catalog', async () => {
    const { config, dataDir } = await shapefileCatalog();
    await writeFile(join(dataDir, 'places/cities.shp'), Buffer.alloc(400, 7));
    const { issues } = await failedBuild(config);
    expect(issues.map((issue) => `${issue.code} ${issue.source}:${issue.line}`)).toEqual(['UnreadableDataFile datasets/places.yaml:11']);
    expect(issues[0]!.message).toMatch(/^"places\/cities\.shp" cannot be read as shapefile: GDAL cannot open it/);
    expect(issues[0]!.message).not.toContain(dataDir);
    expect(issues[0]!.message).not.toContain('/input/');
  });
});
