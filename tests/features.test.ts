import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { Ajv, type ValidateFunction } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import proj4 from 'proj4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { encodeWkb } from '../core/geo/wkb.ts';
import { buildCatalog } from '../generator/build.ts';
import { loadConfig } from '../runtime/config.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { TEST_KEYS } from './helpers/queries.ts';
import { startGeoshelf, type RunningSite } from './helpers/web-app.ts';

const SCHEMAS = join(ROOT, '..', 'shared', 'spec-schemas', 'ogcapi-features', 'core', 'openapi', 'schemas');
const hasSchemas = existsSync(SCHEMAS);
if (!hasSchemas) console.warn(`features: ${SCHEMAS} is absent, so answers are not validated against the OGC schemas`);
const hasGdal = await promisify(execFile)('ogrinfo', ['--version']).then(() => true, () => false);
if (!hasGdal) console.warn('features: ogrinfo is absent (apt-get install -y gdal-bin), so the GDAL OAPIF tests are skipped');
const run = promisify(execFile);
/** A Python that imports QGIS (Debian's python3-qgis installs it for the system Python), or null. */
const qgisPython = await (async () => {
  for (const python of ['python3', '/usr/bin/python3']) {
    if (await run(python, ['-c', 'import qgis.core']).then(() => true, () => false)) return python;
  }
  return null;
})();
if (!qgisPython) console.warn('features: no Python here imports QGIS (apt-get install -y python3-qgis qgis-providers), so the QGIS OAPIF test is skipped');
/** A Python that imports OWSLib (Debian's python3-owslib installs it for the system Python), or null. */
const owslibPython = await (async () => {
  for (const python of ['python3', '/usr/bin/python3']) {
    if (await run(python, ['-c', 'import owslib.ogcapi.features']).then(() => true, () => false)) return python;
  }
  return null;
})();
if (!owslibPython) console.warn('features: no Python here imports OWSLib (apt-get install -y python3-owslib), so the OWSLib filter test is skipped');

/** The OGC core schemas (YAML, JSON Schema 2020-12 spelling) compiled with ajv, by file name. */
function loadOgcSchemas(): (name: string) => ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  (ajvFormats as unknown as { default: (ajv: Ajv) => Ajv }).default(ajv);
  // YAML reads `type: null` as null; JSON Schema means the type "null".
  const fix = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(fix);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, key === 'type' && inner === null ? 'null' : key === 'type' && Array.isArray(inner) ? inner.map((type) => type ?? 'null') : fix(inner)]));
  };
  for (const file of readdirSync(SCHEMAS)) {
    for (const [index, document] of readFileSync(join(SCHEMAS, file), 'utf8').split(/^---$/m).entries()) {
      if (index === 0) ajv.addSchema({ ...(fix(parseYaml(document)) as object), $id: `https://ogc.test/schemas/${file}` });
    }
  }
  return (name) => ajv.getSchema(`https://ogc.test/schemas/${name}`)!;
}

let site: RunningSite;
let duck: DuckDBConnection;
let instance: DuckDBInstance;
let validate: (name: string) => ValidateFunction;

const COUNTRIES = 'natural-earth.countries.countries-110m';
const COUNTIES = 'us-census.us-boundaries.counties';
/** Places of the United States on both sides of the antimeridian: name, longitude, latitude. */
const US_PLACES: [string, number, number][] = [['Guam', 144.79, 13.44], ['Honolulu', -157.86, 21.31], ['Anchorage', -149.9, 61.22], ['San Juan', -66.1, 18.47], ['Pago Pago', -170.7, -14.28]];
const CITIES = 'geonames.cities.cities-15000';
const dataPath = (relative: string) => join(ROOT, 'catalog-data', 'data', relative);

async function getJson(path: string): Promise<{ status: number; type: string | null; body: any }> {
  const response = await fetch(path.startsWith('http') ? path : `${site.origin}${path}`);
  return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
}

function expectValid(schema: string, document: unknown): void {
  if (!hasSchemas) return;
  const check = validate(schema);
  expect(check(document), JSON.stringify(check.errors?.slice(0, 3))).toBe(true);
}

/** Row numbers (ids) of a file where `where` holds, as DuckDB reads them. */
async function duckIds(file: string, where = 'TRUE'): Promise<number[]> {
  const rows = (await duck.runAndReadAll(`SELECT file_row_number FROM read_parquet('${dataPath(file)}', file_row_number = true) WHERE ${where} ORDER BY 1`)).getRows();
  return rows.map((row) => Number(row[0]));
}

/** Every feature of a request, following next links. */
async function walk(path: string): Promise<{ ids: number[]; pages: number; sizes: number[]; names: unknown[] }> {
  const ids: number[] = [];
  const names: unknown[] = [];
  const sizes: number[] = [];
  let pages = 0;
  let next: string | undefined = path;
  while (next) {
    const { body } = await getJson(next);
    expectValid('featureCollectionGeoJSON.yaml', body);
    ids.push(...body.features.map((feature: { id: number }) => feature.id));
    names.push(...body.features.map((feature: { properties: { name?: unknown } }) => feature.properties.name));
    sizes.push(body.features.length);
    next = body.links.find((link: { rel: string }) => link.rel === 'next')?.href;
    pages++;
  }
  return { ids, pages, sizes, names };
}

/** URLs of every request the site received, in order: its access log. */
const requests: string[] = [];

beforeAll(async () => {
  site = await startGeoshelf({ onRequest: (request) => requests.push(request.url) });
  instance = await DuckDBInstance.create(':memory:');
  duck = await instance.connect();
  if (hasSchemas) validate = loadOgcSchemas();
});
afterAll(async () => {
  duck?.closeSync();
  instance?.closeSync();
  await site?.close();
});

describe.skipIf(!hasSchemas)('answers validate against the OGC API - Features core schemas', () => {
  it.each([
    ['/features', 'landingPage.yaml'],
    ['/features/conformance', 'confClasses.yaml'],
    ['/features/collections', 'collections.yaml'],
    [`/features/collections/${COUNTRIES}`, 'collection.yaml'],
    [`/features/collections/${COUNTIES}`, 'collection.yaml'],
    [`/features/collections/${COUNTRIES}/items?limit=3`, 'featureCollectionGeoJSON.yaml'],
    [`/features/collections/${COUNTRIES}/items/4`, 'featureGeoJSON.yaml'],
  ])('%s is a valid %s', async (path, schema) => {
    const { status, body } = await getJson(path);
    expect(status).toBe(200);
    expectValid(schema, body);
  });
});

describe('OGC API - Features over the sample catalog', () => {
  it('the landing page links the OpenAPI 3.0 document, the docs, conformance and the collections', async () => {
    const { body } = await getJson('/features');
    const rels = Object.fromEntries(body.links.map((link: { rel: string; href: string; type: string }) => [link.rel, link]));
    expect(rels['service-desc']).toEqual(expect.objectContaining({ href: `${site.origin}/features/api`, type: 'application/vnd.oai.openapi+json;version=3.0' }));
    expect(rels['service-doc'].href).toBe(`${site.origin}/developers/`);
    const api = await getJson(rels['service-desc'].href);
    expect(api.body.openapi).toBe('3.0.3');
    expect(api.body.servers[0].url).toBe(`${site.origin}/features`);
    expect(Object.keys(api.body.paths)).toContain('/collections/{collectionId}/items');
  });

  it('lists a collection per GeoParquet file, with its extent, items link and CRS84', async () => {
    const { body } = await getJson('/features/collections');
    const countries = body.collections.find((collection: { id: string }) => collection.id === COUNTRIES);
    expect(countries.title).toBe('Admin-0 countries: Countries, 1:110 million');
    expect(countries.extent.spatial.bbox[0]).toHaveLength(4);
    expect(countries.crs).toEqual(['http://www.opengis.net/def/crs/OGC/1.3/CRS84']);
    expect(countries.links.find((link: { rel: string }) => link.rel === 'items').type).toBe('application/geo+json');
    expect(body.collections.every((collection: { id: string }) => /^[a-z0-9-]+\.[a-z0-9-]+\.[a-z0-9-]+$/.test(collection.id))).toBe(true);
  });

  it('pages the collections: next links from a small limit walk every collection once, in the order of the whole list', async () => {
    const whole = await getJson('/features/collections');
    expect(whole.body.numberMatched).toBe(whole.body.collections.length);
    expect(whole.body.links.map((link: { rel: string }) => link.rel)).toEqual(['self']);
    const ids: string[] = [];
    let next: string | undefined = `${site.origin}/features/collections?limit=7`;
    let pages = 0;
    while (next) {
      const page = await getJson(next);
      expect(page.status).toBe(200);
      expect(page.body.numberMatched).toBe(whole.body.numberMatched);
      expect(page.body.numberReturned).toBe(page.body.collections.length);
      expect(page.body.collections.length).toBeLessThanOrEqual(7);
      if (pages > 0) expect(page.body.links.find((link: { rel: string }) => link.rel === 'prev')?.href).toBeDefined();
      ids.push(...page.body.collections.map((collection: { id: string }) => collection.id));
      next = page.body.links.find((link: { rel: string }) => link.rel === 'next')?.href;
      pages += 1;
    }
    expect(ids).toEqual(whole.body.collections.map((collection: { id: string }) => collection.id));
    expect(pages).toBe(Math.ceil(ids.length / 7));
  });

  it.each([['limit=0', 'limit'], ['offset=-1', 'offset'], ['limit=abc', 'limit']])('refuses /features/collections?%s with 400 naming %s', async (query, name) => {
    const { status, body } = await getJson(`/features/collections?${query}`);
    expect(status).toBe(400);
    expect(body.code).toBe('InvalidParameterValue');
    expect(body.description).toContain(`"${name}"`);
  });

  it('walking next links of a whole collection gives every row exactly once, in file order', async () => {
    const walked = await walk(`/features/collections/${COUNTRIES}/items?limit=25`);
    const rows = (await duck.runAndReadAll(`SELECT file_row_number, name FROM read_parquet('${dataPath('natural-earth/countries/2.0.2/countries-110m.parquet')}', file_row_number = true) ORDER BY 1`)).getRows();
    expect(walked.ids).toEqual(rows.map((row) => Number(row[0])));
    expect(walked.names).toEqual(rows.map((row) => row[1]));
    expect(walked.sizes).toEqual([25, 50, 100, rows.length - 175]);
  });

  it.each([
    ['without filters', `/features/collections/${CITIES}/items`],
    ['with a bbox', `/features/collections/${CITIES}/items?bbox=-180,-60,180,80`],
  ])('next links %s double the page size up to 1,000, so a client that pages at 10 reads a collection in few requests', async (_, path) => {
    const walked = await walk(path);
    const expected: number[] = [];
    for (let size = 10, left = walked.ids.length; left > 0; left -= expected.at(-1)!, size = Math.min(size * 2, 1000)) expected.push(Math.min(size, left));
    expect(walked.ids.length).toBeGreaterThan(5000);
    expect(walked.sizes).toEqual(expected);
    expect(new Set(walked.ids).size).toBe(walked.ids.length);
  });

  it('a prev link leads back to the page before', async () => {
    const first = await getJson(`/features/collections/${COUNTRIES}/items?limit=5&name=France`);
    expect(first.body.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(['France']);
    const page1 = await getJson(`/features/collections/${COUNTRIES}/items?limit=5`);
    const page2 = await getJson(page1.body.links.find((link: { rel: string }) => link.rel === 'next').href);
    const back = await getJson(page2.body.links.find((link: { rel: string }) => link.rel === 'prev').href);
    expect(back.body.features.map((feature: { id: number }) => feature.id)).toEqual([0, 1, 2, 3, 4]);
    const filtered = await walk(`/features/collections/${CITIES}/items?limit=40&bbox=0,40,20,60`);
    const second = await getJson(`/features/collections/${CITIES}/items?limit=40&bbox=0,40,20,60&after=${filtered.ids[79]}`);
    const previous = await getJson(second.body.links.find((link: { rel: string }) => link.rel === 'prev').href);
    expect(previous.body.features.map((feature: { id: number }) => feature.id)).toEqual(filtered.ids.slice(40, 80));
  });

  it.each([
    ['a box', '0,40,20,60', 'bbox.xmax >= 0 AND bbox.xmin <= 20 AND bbox.ymax >= 40 AND bbox.ymin <= 60'],
    ['a box across the antimeridian', '170,-50,-170,0', '(bbox.xmax >= 170 OR bbox.xmin <= -170) AND bbox.ymax >= -50 AND bbox.ymin <= 0'],
  ])('a bbox filter (%s) returns what DuckDB finds in the file', async (_, bbox, where) => {
    const walked = await walk(`/features/collections/${CITIES}/items?limit=500&bbox=${bbox}`);
    const expected = await duckIds('geonames/cities/3.1.0/cities-15000.parquet', where);
    expect(expected.length).toBeGreaterThan(10);
    expect(walked.ids).toEqual(expected);
    const { body } = await getJson(`/features/collections/${CITIES}/items?bbox=${bbox}`);
    expect(body.numberMatched).toBe(expected.length);
  });

  it('answers a feature by id, the same as in its page', async () => {
    const page = await getJson(`/features/collections/${COUNTRIES}/items?after=9&limit=1`);
    const feature = await getJson(`/features/collections/${COUNTRIES}/items/10`);
    expect(feature.type).toBe('application/geo+json');
    expect(page.body.features[0]).toEqual(expect.objectContaining({ id: 10, geometry: feature.body.geometry, properties: feature.body.properties }));
  });

  it('serves the page size the OpenAPI document declares as the default when limit is not given', async () => {
    const api = await getJson('/features/api');
    const { body } = await getJson(`/features/collections/${COUNTRIES}/items`);
    expect(body.numberReturned).toBe(api.body.components.parameters.limit.schema.default);
  });

  it('clamps a limit above 10,000 to 10,000 and counts without filters from the catalog', async () => {
    const { status, body } = await getJson('/features/collections/geonames.cities.cities-1000/items?limit=20000');
    expect(status).toBe(200);
    expect(body.numberReturned).toBe(10_000);
    expect(body.numberMatched).toBe((await duckIds('geonames/cities/3.1.0/cities-1000.parquet')).length);
    expect(body.links.find((link: { rel: string }) => link.rel === 'next').href).toContain('limit=10000');
  });

  it.each([
    ['bbox with 3 numbers', `/features/collections/${COUNTRIES}/items?bbox=1,2,3`, 400],
    ['bbox with south above north', `/features/collections/${COUNTRIES}/items?bbox=0,50,10,40`, 400],
    ['bbox in another CRS', `/features/collections/${COUNTRIES}/items?bbox=0,0,1,1&bbox-crs=EPSG:3857`, 400],
    ['limit=abc', `/features/collections/${COUNTRIES}/items?limit=abc`, 400],
    ['limit=0', `/features/collections/${COUNTRIES}/items?limit=0`, 400],
    ['datetime=yesterday', `/features/collections/${COUNTRIES}/items?datetime=yesterday`, 400],
    ['an interval that ends before it starts', `/features/collections/${COUNTRIES}/items?datetime=2020-02-01/2020-01-01`, 400],
    ['an interval open at both ends', `/features/collections/${COUNTRIES}/items?datetime=../..`, 400],
    ['an unknown parameter', `/features/collections/${COUNTRIES}/items?colour=red`, 400],
    ['a text filter on a number', '/features/collections/geonames.cities.cities-15000/items?population=many', 400],
    ['after and before together', `/features/collections/${COUNTRIES}/items?after=1&before=5`, 400],
    ['an unknown collection', '/features/collections/nope.nope.nope/items', 404],
    ['a malformed collection id', '/features/collections/nope', 404],
    ['an unknown feature', `/features/collections/${COUNTRIES}/items/177`, 404],
    ['a feature id with a leading zero', `/features/collections/${COUNTRIES}/items/01`, 404],
    ['an unknown path under /features', '/features/nothing/here', 404],
  ])('%s (%s) answers its status with an exception document', async (_, path, status) => {
    const response = await getJson(path);
    expect(response.status).toBe(status);
    expect(response.type).toBe('application/json');
    expect(response.body).toEqual({ code: expect.any(String), description: expect.any(String) });
  });

  it('filters by equality on queryables listed by the queryables route', async () => {
    const queryables = await getJson(`/features/collections/${COUNTRIES}/queryables`);
    expect(queryables.type).toBe('application/schema+json');
    expect(queryables.body.properties.name).toEqual(expect.objectContaining({ type: 'string' }));
    const { body } = await getJson(`/features/collections/${COUNTRIES}/items?name=${encodeURIComponent("Côte d'Ivoire")}`);
    expect(body.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(["Côte d'Ivoire"]);
    expect(body.numberMatched).toBe(1);
  });

  it('a datetime on a collection without a time column matches no feature', async () => {
    const { status, body } = await getJson(`/features/collections/${COUNTRIES}/items?datetime=2020-01-01T00:00:00Z/..`);
    expect(status).toBe(200);
    expect(body).toEqual(expect.objectContaining({ numberReturned: 0, numberMatched: 0, features: [] }));
  });
});

describe('a GeoParquet file in EPSG:3857 with a date column', () => {
  const PLACES: [string, number, number, string][] = [
    ['Paris', 2.3522, 48.8566, '2021-03-01'], ['Nairobi', 36.8219, -1.2921, '2021-06-15'], ['Lima', -77.0428, -12.0464, '2022-01-10'],
    ['Suva', 178.4419, -18.1416, '2022-07-04'], ['Oslo', 10.7522, 59.9139, '2023-02-28'],
  ];
  let server: GeoshelfServer;
  let root: string;
  const get = async (path: string) => {
    const response = await server.fetch(new Request(`https://fixture.example.org${path}`));
    return { status: response.status, body: await response.json() as any };
  };

  beforeAll(async () => {
    root = await makeTempDir('geoshelf-features-');
    const dataDir = join(root, 'data');
    await mkdir(dataDir, { recursive: true });
    await writeMercatorPlaces(join(dataDir, 'places-3857.parquet'), PLACES);
    const catalogDir = join(root, 'catalog');
    await mkdir(join(catalogDir, 'collections'), { recursive: true });
    await mkdir(join(catalogDir, 'datasets'), { recursive: true });
    for (const file of ['formats.yaml', 'storage-locations.yaml']) await writeFile(join(catalogDir, file), await readFile(join(ROOT, 'catalog-data', file), 'utf8'));
    await writeFile(join(catalogDir, 'collections/fixtures.yaml'), 'slug: fixtures\nname: Fixtures\n');
    await writeFile(join(catalogDir, 'datasets/places.yaml'), [
      'slug: places', 'collection: fixtures', 'name: Places', 'files:', '  - slug: places-3857', '    name: Places in Web Mercator', '    formats:',
      '      - format: geoparquet', '        sources:', '          - version: 1', '            path: places-3857.parquet', '',
    ].join('\n'));
    const config = loadConfig({}, { catalogDir, dataDir, distDir: join(root, 'dist'), cacheDir: join(root, 'cache'), baseUrl: 'https://fixture.example.org', ci: 'true' });
    await buildCatalog({ config });
    server = createServer({ config: { ...config, queryKeys: TEST_KEYS } });
  });
  afterAll(async () => {
    await server?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('returns geometries in CRS84 and a temporal extent from the date column', async () => {
    const { body } = await get('/features/collections/fixtures.places.places-3857/items');
    expect(body.features).toHaveLength(PLACES.length);
    for (const [index, [name, lon, lat]] of PLACES.entries()) {
      expect(body.features[index].properties.name).toBe(name);
      expect(body.features[index].geometry.coordinates[0]).toBeCloseTo(lon, 6);
      expect(body.features[index].geometry.coordinates[1]).toBeCloseTo(lat, 6);
    }
    const collection = await get('/features/collections/fixtures.places.places-3857');
    expect(collection.body.extent.temporal.interval).toEqual([['2021-03-01T00:00:00Z', '2023-02-28T00:00:00Z']]);
    expect(collection.body.extent.spatial.bbox[0][0]).toBeCloseTo(-77.0428, 3);
  });

  it('filters a bbox given in CRS84 against the projected file', async () => {
    const europe = await get('/features/collections/fixtures.places.places-3857/items?bbox=-10,35,30,70');
    expect(europe.body.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(['Paris', 'Oslo']);
    const pacific = await get('/features/collections/fixtures.places.places-3857/items?bbox=170,-30,-170,0');
    expect(pacific.body.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(['Suva']);
  });

  it.each([
    ['2022-01-10', ['Lima']],
    ['2021-06-01T00:00:00Z/2022-06-30T23:59:59Z', ['Nairobi', 'Lima']],
    ['../2021-12-31T00:00:00+02:00', ['Paris', 'Nairobi']],
    ['2023-01-01T00:00:00Z/..', ['Oslo']],
  ])('datetime=%s selects by the date column', async (datetime, names) => {
    const { body } = await get(`/features/collections/fixtures.places.places-3857/items?datetime=${encodeURIComponent(datetime)}`);
    expect(body.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(names);
    expect(body.numberMatched).toBe(names.length);
  });

  it.each([
    ["T_AFTER(observed_on, DATE('2022-01-10'))", ['Suva', 'Oslo']],
    ["T_DURING(observed_on, INTERVAL('2021-03-01', '2022-07-04'))", ['Nairobi', 'Lima']],
    ["T_INTERSECTS(observed_on, INTERVAL('..', '2021-06-15T00:00:00Z'))", ['Paris', 'Nairobi']],
    ["observed_on >= '2022-01-10T00:00:00Z'", ['Lima', 'Suva', 'Oslo']],
    ["observed_on = DATE('2023-02-28') OR T_BEFORE(observed_on, TIMESTAMP('2021-03-02T00:00:00Z'))", ['Paris', 'Oslo']],
    ['S_INTERSECTS(geometry, BBOX(-10, 35, 30, 70))', ['Paris', 'Oslo']],
    ['S_WITHIN(geometry, POLYGON((170 -30, 180 -30, 180 0, 170 0, 170 -30)))', ['Suva']],
    ['S_DISJOINT(geometry, BBOX(-180, -90, 0, 90))', ['Paris', 'Nairobi', 'Suva', 'Oslo']],
    ["T_STARTEDBY(INTERVAL('2021-03-01', '2023-02-28'), observed_on)", ['Paris']],
  ])('filter=%s selects by the date column and by CRS84 geometries in a file of another CRS', async (filter, names) => {
    const { status, body } = await get(`/features/collections/fixtures.places.places-3857/items?filter=${encodeURIComponent(filter)}`);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(names);
    expect(body.numberMatched).toBe(names.length);
  });
});

describe.skipIf(!hasGdal)('GDAL reads the API with its OAPIF driver', () => {
  const base = () => `OAPIF:${site.origin}/features`;

  it('ogrinfo finds the catalogued count and geometry type', async () => {
    const { stdout } = await run('ogrinfo', ['-so', base(), 'geonames.megacities.megacities'], { timeout: 60_000 });
    const catalog = await getJson('/api/collections/geonames/datasets/megacities/files/megacities');
    const count = (await duckIds('geonames/megacities/3.1.0/megacities.parquet')).length;
    expect(catalog.status).toBe(200);
    expect(stdout).toContain('Geometry: Point');
    expect(stdout).toContain(`Feature Count: ${count}`);
  });

  it('ogr2ogr copies a whole collection', async () => {
    const out = join(await makeTempDir('geoshelf-ogr-'), 'countries.json');
    await run('ogr2ogr', ['-f', 'GeoJSON', out, base(), COUNTRIES], { timeout: 120_000 });
    const copied = JSON.parse(await readFile(out, 'utf8'));
    expect(copied.features).toHaveLength((await duckIds('natural-earth/countries/2.0.2/countries-110m.parquet')).length);
    await rm(join(out, '..'), { recursive: true, force: true });
  });

  it('ogrinfo -spat reads a bbox-filtered layer with the right count', async () => {
    const { stdout } = await run('ogrinfo', ['-so', '-spat', '0', '40', '20', '60', base(), COUNTRIES], { timeout: 60_000 });
    const { body } = await getJson(`/features/collections/${COUNTRIES}/items?bbox=0,40,20,60&limit=1000`);
    expect(body.numberReturned).toBeGreaterThan(5);
    expect(stdout).toContain(`Feature Count: ${body.numberReturned}`);
  });

  it('ogr2ogr with no options copies the largest collection whole, in pages that grow from the 10 it asks for', async () => {
    const { id, count } = await findLargestCollection();
    const folder = await makeTempDir('geoshelf-ogr-');
    const out = join(folder, 'copy.gpkg');
    const seen = requests.length;
    const started = performance.now();
    await run('ogr2ogr', ['-f', 'GPKG', out, base(), id], { timeout: 900_000 });
    const seconds = (performance.now() - started) / 1000;
    const pages = listItemsRequests(requests.slice(seen), id);
    const { stdout } = await run('ogrinfo', ['-so', out, id]);
    await rm(folder, { recursive: true, force: true });
    console.log(`features: ogr2ogr (GDAL 3.6, no options) copied ${count} features of ${id} in ${seconds.toFixed(1)} s, ${pages.length} item pages`);
    expect(stdout).toContain(`Feature Count: ${count}`);
    expect(pages[0]?.searchParams.get('limit')).toBe('10');
    // At 10 a page, as GDAL 3.6 asks whatever the API declares, the copy took 13,500 pages and 10 minutes.
    expect(pages.length).toBeLessThan(count / 500);
  }, 900_000);

  it('ogr2ogr -where name = … sends the filter to the server: one filtered page, not a scan of the collection', async () => {
    const folder = await makeTempDir('geoshelf-ogr-');
    const out = join(folder, 'fiji.json');
    const seen = requests.length;
    await run('ogr2ogr', ['-f', 'GeoJSON', '-where', "name = 'Fiji'", out, base(), COUNTRIES], { timeout: 120_000 });
    const copied = JSON.parse(await readFile(out, 'utf8'));
    await rm(folder, { recursive: true, force: true });
    expect(copied.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(['Fiji']);
    const pages = listItemsRequests(requests.slice(seen), COUNTRIES);
    // GDAL 3.6 sends it as CQL2 text, as the API declares filter-lang; without that, as ?name=Fiji.
    const filtered = pages.filter((url) => url.searchParams.get('filter') === "name = 'Fiji'" && url.searchParams.get('filter-lang') === 'cql-text');
    expect(filtered).toHaveLength(1);
    // GDAL reads one unfiltered page for the layer's fields first; without the pushdown it read all 18.
    expect(pages.length - filtered.length).toBeLessThanOrEqual(1);
  });

  it('ogr2ogr -where with comparisons GDAL cannot spell as ?name=value sends them as a CQL2 filter, and copies what the server selects', async () => {
    const folder = await makeTempDir('geoshelf-ogr-');
    const out = join(folder, 'big.json');
    const seen = requests.length;
    const where = "population > 10000000 AND (country = 'CN' OR country = 'IN')";
    await run('ogr2ogr', ['-f', 'GeoJSON', '-where', where, out, base(), 'geonames.megacities.megacities'], { timeout: 120_000 });
    const copied = JSON.parse(await readFile(out, 'utf8'));
    await rm(folder, { recursive: true, force: true });
    const { body } = await getJson(`/features/collections/geonames.megacities.megacities/items?limit=1000&filter=${encodeURIComponent(where)}`);
    expect(body.numberReturned).toBeGreaterThan(3);
    expect(copied.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(body.features.map((feature: { properties: { name: string } }) => feature.properties.name));
    const pages = listItemsRequests(requests.slice(seen), 'geonames.megacities.megacities');
    const filtered = pages.filter((url) => url.searchParams.has('filter'));
    expect(filtered.length).toBeGreaterThan(0);
    expect(filtered[0]!.searchParams.get('filter')).toMatch(/population > 10000000/);
    // One unfiltered page for the layer's fields; every other page carries the filter.
    expect(pages.length - filtered.length).toBeLessThanOrEqual(1);
  });

  it('ogr2ogr -where with OGR SQL\'s ILIKE sends it in cql-text, read as LIKE in CASEI', async () => {
    const folder = await makeTempDir('geoshelf-ogr-');
    const out = join(folder, 'tok.json');
    const seen = requests.length;
    await run('ogr2ogr', ['-f', 'GeoJSON', '-where', "name ILIKE 'TOK%'", out, base(), 'geonames.megacities.megacities'], { timeout: 120_000 });
    const copied = JSON.parse(await readFile(out, 'utf8'));
    await rm(folder, { recursive: true, force: true });
    expect(copied.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toContain('Tokyo');
    expect(copied.features.every((feature: { properties: { name: string } }) => /^tok/i.test(feature.properties.name))).toBe(true);
    const filtered = listItemsRequests(requests.slice(seen), 'geonames.megacities.megacities').filter((url) => url.searchParams.has('filter'));
    expect(filtered[0]?.searchParams.get('filter')).toMatch(/ILIKE/);
  });

  it('ogrinfo frames the US counties, which cross the antimeridian, from -180° to 180° and by their latitudes', async () => {
    const { stdout } = await run('ogrinfo', ['-so', base(), COUNTIES], { timeout: 60_000 });
    const [, ...corners] = /Extent: \((\S+), (\S+)\) - \((\S+), (\S+)\)/.exec(stdout) ?? [];
    expect(corners.map(Number).map((value) => Math.round(value))).toEqual([-180, -14, 180, 71]);
  });
});

describe.skipIf(!qgisPython)('QGIS reads the API with its OAPIF provider', () => {
  it.each([
    ['/features', COUNTIES],
    ['/stac/api', 'us-census.us-boundaries'],
  ])('frames %s %s, which crosses the antimeridian, around every state and territory', async (api, collection) => {
    const script = [
      'import sys', 'from qgis.core import QgsApplication, QgsVectorLayer',
      'app = QgsApplication([], False)', 'app.initQgis()',
      "layer = QgsVectorLayer(f\"url='{sys.argv[1]}' typename='{sys.argv[2]}'\", 'layer', 'OAPIF')",
      'e = layer.extent()', "print('VALID' if layer.isValid() else 'INVALID', e.xMinimum(), e.yMinimum(), e.xMaximum(), e.yMaximum())",
    ].join('\n');
    const { stdout } = await run(qgisPython!, ['-c', script, `${site.origin}${api}`, collection], { timeout: 120_000, env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' } });
    const [valid, ...numbers] = stdout.trim().split(/\s+/).slice(-5);
    expect(valid).toBe('VALID');
    const [west, south, east, north] = numbers.map(Number) as [number, number, number, number];
    // QGIS 3.22 swapped a crossing first box into [-64.6, 144.6], the Atlantic and Europe, which holds none of these places.
    for (const [name, lon, lat] of US_PLACES) expect(lon >= west && lon <= east && lat >= south && lat <= north, `${name} in ${numbers.join(', ')}`).toBe(true);
  });
});

describe.skipIf(!owslibPython)('OWSLib reads the API with a CQL2 filter', () => {
  it('gets the features the filter selects, as the API answers them', async () => {
    const filter = "population > 10000000 AND S_INTERSECTS(geometry, BBOX(60, 0, 150, 60))";
    const script = [
      'import sys, json', 'from owslib.ogcapi.features import Features',
      'api = Features(sys.argv[1])',
      "items = api.collection_items(sys.argv[2], limit=1000, filter=sys.argv[3], **{'filter-lang': 'cql2-text'})",
      "print(json.dumps({'matched': items.get('numberMatched'), 'names': [feature['properties']['name'] for feature in items['features']]}))",
    ].join('\n');
    const { stdout } = await run(owslibPython!, ['-c', script, `${site.origin}/features`, 'geonames.megacities.megacities', filter], { timeout: 120_000 });
    const read = JSON.parse(stdout.trim().split('\n').at(-1)!) as { matched: number; names: string[] };
    const { body } = await getJson(`/features/collections/geonames.megacities.megacities/items?limit=1000&filter=${encodeURIComponent(filter)}`);
    expect(read.names.length).toBeGreaterThan(3);
    expect(read.names).toEqual(body.features.map((feature: { properties: { name: string } }) => feature.properties.name));
    expect(read.matched).toBe(body.numberMatched);
  });
});

/** The collection with the most features, by the catalog's count of its file. */
async function findLargestCollection(): Promise<{ id: string; count: number }> {
  const { body } = await getJson('/features/collections');
  const counts = await Promise.all(body.collections.map(async (collection: { id: string; links: { rel: string; href: string }[] }) => {
    const file = await getJson(collection.links.find((link) => link.rel === 'describedby')!.href);
    return { id: collection.id, count: Number(file.body.file.file_metadata.feature_count) };
  }));
  return counts.sort((a, b) => b.count - a.count)[0]!;
}

/** The requests for pages of a collection's items, from the access log. */
function listItemsRequests(urls: string[], collectionId: string): URL[] {
  return urls.map((url) => new URL(url)).filter((url) => url.pathname === `/features/collections/${collectionId}/items`);
}

/** A GeoParquet file of points in EPSG:3857 (PROJJSON id in its geo metadata) with a bbox covering and a date column. */
async function writeMercatorPlaces(path: string, places: [string, number, number, string][]): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  const rows = places.map(([name, lon, lat, date]) => {
    const [x, y] = proj4('EPSG:4326', 'EPSG:3857').forward([lon, lat]);
    const hex = Buffer.from(encodeWkb({ type: 'Point', coordinates: [x!, y!] })).toString('hex');
    return `('${name}', DATE '${date}', from_hex('${hex}'), ${x}, ${y})`;
  });
  const geo = JSON.stringify({
    version: '1.1.0', primary_column: 'geometry',
    columns: { geometry: { encoding: 'WKB', geometry_types: ['Point'], crs: { id: { authority: 'EPSG', code: 3857 } }, covering: { bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] } } } },
  });
  await connection.run(`COPY (SELECT name, observed_on, st_geomfromwkb(wkb) AS geometry, {'xmin': x, 'ymin': y, 'xmax': x, 'ymax': y} AS bbox
    FROM (VALUES ${rows.join(', ')}) AS t(name, observed_on, wkb, x, y)) TO '${path}' (FORMAT parquet, GEOPARQUET_VERSION 'NONE', KV_METADATA {geo: '${geo}'})`);
  connection.closeSync();
  db.closeSync();
}
