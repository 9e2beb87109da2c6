import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { Ajv, ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ITEM_LIMIT } from '../core/api/stac/params.ts';
import { STAC_API_ROUTES } from '../core/api/stac/routes.ts';
import type { StacCollection, StacItem, StacLink } from '../schemas/stac.ts';
import type { StacCollections, StacItemCollection, StacLandingPage } from '../schemas/stac-api.ts';
import { sampleConfig, sampleServer } from './helpers/sample.ts';
import { createStacAjv, createStacApiValidators, HAS_SPEC, SPEC_DIR, stacSchemaErrors } from './helpers/stac-schemas.ts';

if (!HAS_SPEC) console.warn(`stac-api: ${SPEC_DIR} is absent, so answers are not validated against the STAC and STAC API schemas`);

const server = sampleServer();
const BASE = sampleConfig().baseUrl;
type Validators = Awaited<ReturnType<typeof createStacApiValidators>>;
let ajv: Ajv | undefined;
let validators: Validators | undefined;

beforeAll(async () => {
  if (!HAS_SPEC) return;
  ajv = await createStacAjv();
  validators = await createStacApiValidators(ajv);
});
afterAll(() => server.close());

/** A path or an absolute link of the build, as a request to the server. */
function request(target: string, init: RequestInit = {}): Promise<Response> {
  const path = target.startsWith(BASE) ? target.slice(BASE.length) : target;
  return Promise.resolve(server.fetch(new Request(`http://localhost${path}`, init)));
}

async function getJson<T>(target: string): Promise<{ status: number; body: T; response: Response }> {
  const response = await request(target);
  return { status: response.status, body: (await response.json()) as T, response };
}

function postSearch(body: unknown): Promise<Response> {
  return request('/stac/api/search', { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
}

/** Checks a document against a fragment schema and, for STAC documents, their STAC 1.1 and extension schemas. */
function expectValid(validate: keyof Validators, document: unknown, stacDocuments: { type: string; stac_extensions?: string[] }[] = []): void {
  if (!validators || !ajv) return;
  const check: ValidateFunction = validators[validate];
  expect(check(document) ? [] : check.errors, `against the STAC API ${validate} schema`).toEqual([]);
  for (const stac of stacDocuments) expect(stacSchemaErrors(ajv, stac), (stac as { id?: string }).id).toEqual([]);
}

/** A search page, checked against the ItemCollection fragment and every Item against the STAC schemas. */
async function search(query: string): Promise<StacItemCollection> {
  const { status, body, response } = await getJson<StacItemCollection>(`/stac/api/search${query}`);
  expect(status, JSON.stringify(body).slice(0, 300)).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/geo+json');
  expectValid('itemCollection', body, body.features);
  return body;
}

async function searchPost(body: unknown): Promise<StacItemCollection> {
  const response = await postSearch(body);
  const page = (await response.json()) as StacItemCollection;
  expect(response.status, JSON.stringify(page).slice(0, 300)).toBe(200);
  expectValid('itemCollection', page, page.features);
  return page;
}

const key = (item: StacItem) => `${item.collection}/${item.id}`;
const keys = (page: StacItemCollection) => page.features.map(key);

/** The WGS84 bounds of every file's latest version, from the /api file documents: what STAC boxes must agree with. */
async function fileBounds(): Promise<Map<string, [number, number, number, number] | null>> {
  const { body } = await getJson<{ slug: string; datasets: { slug: string; files: { slug: string; links: { self: string } }[] }[] }[]>('/api/collections?include=datasets,files');
  const bounds = new Map<string, [number, number, number, number] | null>();
  for (const collection of body) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        const { body: document } = await getJson<{ file: { file_metadata: { bounds?: [number, number, number, number] | null } | null } }>(file.links.self);
        bounds.set(`${collection.slug}.${dataset.slug}/${file.slug}`, document.file.file_metadata?.bounds ?? null);
      }
    }
  }
  return bounds;
}

/** Whether two boxes meet, either of them possibly crossing ±180° (west > east). */
function boxesMeet(a: number[], b: number[]): boolean {
  const pieces = ([west, south, east, north]: number[]) => (west! <= east! ? [[west!, east!]] : [[west!, 180], [-180, east!]]).map(([w, e]) => [w!, south!, e!, north!]);
  return pieces(a).some(([w1, s1, e1, n1]) => pieces(b).some(([w2, s2, e2, n2]) => w1! <= e2! && e1! >= w2! && s1! <= n2! && n1! >= s2!));
}

describe('the landing page and conformance', () => {
  it('is a Catalog with conformsTo and links to the API definition, its docs, conformance, collections, search and every Collection', async () => {
    const { status, body, response } = await getJson<StacLandingPage>('/stac/api');
    expect(status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expectValid('landingPage', body, [body]);
    expect(body.conformsTo).toEqual(expect.arrayContaining([
      'https://api.stacspec.org/v1.0.0/core',
      'https://api.stacspec.org/v1.0.0/collections',
      'https://api.stacspec.org/v1.0.0/ogcapi-features',
      'https://api.stacspec.org/v1.0.0/item-search',
      'https://api.stacspec.org/v1.0.0/item-search#sort',
      'https://api.stacspec.org/v1.0.0-rc.1/item-search#free-text',
      'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
      'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
    ]));
    const link = (rel: string) => body.links.filter((candidate) => candidate.rel === rel);
    expect(link('service-desc')).toEqual([expect.objectContaining({ href: `${BASE}/stac/api/openapi`, type: 'application/vnd.oai.openapi+json;version=3.1' })]);
    expect(link('service-doc')).toEqual([expect.objectContaining({ href: `${BASE}/developers/`, type: 'text/html' })]);
    expect(link('conformance')[0]!.href).toBe(`${BASE}/stac/api/conformance`);
    expect(link('data')[0]!.href).toBe(`${BASE}/stac/api/collections`);
    expect(link('search').map((search) => search.method)).toEqual(['GET', 'POST']);
    const { body: collections } = await getJson<StacCollections>('/stac/api/collections?limit=1000');
    expect(link('child').map((child) => child.href)).toEqual(collections.collections.map((collection) => `${BASE}/stac/api/collections/${collection.id}`));
  });

  it('declares the same classes at /conformance', async () => {
    const { body: landing } = await getJson<StacLandingPage>('/stac/api');
    const { status, body } = await getJson<{ conformsTo: string[] }>('/stac/api/conformance');
    expect(status).toBe(200);
    expectValid('conformance', body);
    expect(body.conformsTo).toEqual(landing.conformsTo);
  });

  it('answers with an ETag and a cache lifetime like the catalog, and 304 to a matching If-None-Match', async () => {
    const first = await request('/stac/api/search?bbox=0,40,20,60');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(first.headers.get('cache-control')).toBe(`public, max-age=${sampleConfig().cacheMaxAge}`);
    expect(first.headers.get('access-control-allow-origin')).toBe('*');
    expect((await request('/stac/api/search?bbox=0,40,20,60', { headers: { 'if-none-match': etag } })).status).toBe(304);
  });
});

describe('collections', () => {
  it('pages through every dataset once as a Collection, following next links', async () => {
    const seen: string[] = [];
    let next: string | undefined = '/stac/api/collections?limit=5';
    let matched = 0;
    while (next) {
      const { status, body }: { status: number; body: StacCollections } = await getJson<StacCollections>(next);
      expect(status).toBe(200);
      expectValid('collections', body, body.collections);
      expect(body.numberReturned).toBe(body.collections.length);
      seen.push(...body.collections.map((collection) => collection.id));
      matched = body.numberMatched;
      next = body.links.find((link) => link.rel === 'next')?.href;
    }
    expect(seen.length).toBe(matched);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain('natural-earth.countries');
  });

  it('serves one Collection with an items link, and 404 for an id that names nothing', async () => {
    const { status, body } = await getJson<StacCollection>('/stac/api/collections/natural-earth.countries');
    expect(status).toBe(200);
    expectValid('collections', { collections: [body], links: [] }, [body]);
    expect(body.links.find((link) => link.rel === 'items')?.href).toBe(`${BASE}/stac/api/collections/natural-earth.countries/items`);
    for (const path of ['/stac/api/collections/natural-earth.nowhere', '/stac/api/collections/no-dot-here']) {
      const missing = await getJson<{ code: string; description: string }>(path);
      expect(missing.status, path).toBe(404);
      expect(missing.body.code).toBe('NotFound');
    }
  });

  it('pages the items of a Collection and filters them by bbox', async () => {
    const items: string[] = [];
    let next: string | undefined = '/stac/api/collections/natural-earth.countries/items?limit=1';
    while (next) {
      const { status, body, response }: { status: number; body: StacItemCollection; response: Response } = await getJson<StacItemCollection>(next);
      expect(status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/geo+json');
      expectValid('features', body, body.features);
      expect(body.links.find((link) => link.rel === 'collection')?.href).toBe(`${BASE}/stac/api/collections/natural-earth.countries`);
      items.push(...body.features.map((item) => item.id));
      next = body.links.find((link) => link.rel === 'next')?.href;
    }
    expect(items).toEqual(['countries-110m', 'countries-50m', 'countries-10m']);
    const { body } = await getJson<StacItemCollection>('/stac/api/collections/us-census.us-boundaries/items?bbox=150,0,160,10');
    expect(body.features.map((item) => item.id).sort()).toEqual(['counties', 'nation', 'states']);
  });

  it('serves an Item, and an older version by {file}@{version} with version links between them', async () => {
    const latest = await getJson<StacItem>('/stac/api/collections/natural-earth.countries/items/countries-110m');
    expect(latest.status).toBe(200);
    expect(latest.response.headers.get('content-type')).toBe('application/geo+json');
    expectValid('itemCollection', { type: 'FeatureCollection', features: [latest.body] }, [latest.body]);
    const older = latest.body.links.find((link) => link.rel === 'predecessor-version')!;
    const { status, body } = await getJson<StacItem>(older.href);
    expect(status).toBe(200);
    expect(body.id).toBe('countries-110m@1.1.4');
    expect(body.properties.version).toBe('1.1.4');
    expect(body.links.find((link) => link.rel === 'latest-version')?.href).toBe(`${BASE}/stac/api/collections/natural-earth.countries/items/countries-110m`);
    if (ajv) expect(stacSchemaErrors(ajv, body)).toEqual([]);
  });
});

describe('item search', () => {
  let bounds: Map<string, [number, number, number, number] | null>;
  let all: StacItem[];
  beforeAll(async () => {
    bounds = await fileBounds();
    all = (await search('?limit=10000')).features;
  });

  it('searches the latest Item of every file', () => {
    expect(all.map(key).sort()).toEqual([...bounds.keys()].sort());
  });

  it.each([
    ['Europe', [0, 40, 20, 60]],
    ['the contiguous United States', [-100, 30, -90, 40]],
    ['near the South Pole', [0, -89, 1, -88]],
    ['the Pacific across the antimeridian', [170, -20, -170, 0]],
    ['a sliver across the antimeridian west of Hawaii', [175, 20, -175, 30]],
  ])('returns exactly the files whose bounds meet a bbox over %s', async (_, box) => {
    const expected = [...bounds].filter(([, fileBox]) => fileBox && boxesMeet(fileBox, box)).map(([name]) => name).sort();
    const page = await search(`?limit=10000&bbox=${box.join(',')}`);
    expect(keys(page).sort()).toEqual(expected);
    expect(page.numberMatched).toBe(expected.length);
  });

  it('reads a box with west > east as crossing the antimeridian, not as the world between', async () => {
    const crossing = keys(await search('?limit=10000&bbox=175,20,-175,30'));
    expect(crossing).toContain('us-census.us-boundaries/states');
    expect(crossing).not.toContain('us-census.us-cities/us-cities');
    expect(keys(await search('?limit=10000&bbox=-175,20,175,30'))).toContain('us-census.us-cities/us-cities');
  });

  it('takes a 3D bbox, dropping the heights', async () => {
    expect(keys(await search('?limit=10000&bbox=0,40,-100,20,60,100')).sort()).toEqual(keys(await search('?limit=10000&bbox=0,40,20,60')).sort());
  });

  it('matches intersects against the footprints, not their envelope: a triangle that misses the US borders box its envelope meets', async () => {
    const triangle = { type: 'Polygon', coordinates: [[[-130, 10], [-110, 10], [-130, 30], [-130, 10]]] };
    const envelope = keys(await search('?limit=10000&bbox=-130,10,-110,30'));
    expect(envelope).toContain('us-census.us-boundaries/state-borders');
    const viaGet = keys(await search(`?limit=10000&intersects=${encodeURIComponent(JSON.stringify(triangle))}`));
    expect(viaGet.sort()).toEqual(envelope.filter((name) => name !== 'us-census.us-boundaries/state-borders').sort());
    expect(keys(await searchPost({ intersects: triangle, limit: 10000 })).sort()).toEqual(viaGet);
  });

  it('matches intersects with a point and a multipolygon across the antimeridian', async () => {
    const point = keys(await searchPost({ intersects: { type: 'Point', coordinates: [-100, 35] }, limit: 10000 }));
    expect(point).toEqual(keys(await search('?limit=10000&bbox=-100,35,-100,35')));
    const halves = { type: 'MultiPolygon', coordinates: [[[[175, -20], [180, -20], [180, -10], [175, -10], [175, -20]]], [[[-180, -20], [-175, -20], [-175, -10], [-180, -10], [-180, -20]]]] };
    expect(keys(await searchPost({ intersects: halves, limit: 10000 })).sort()).toEqual(keys(await search('?limit=10000&bbox=175,-20,-175,-10')).sort());
  });

  it('filters by a datetime instant, closed intervals and intervals open at either end', async () => {
    const times = [...new Set(all.map((item) => item.properties.datetime))].sort();
    expect(times.length).toBeGreaterThan(1);
    const [first, last] = [times[0]!, times.at(-1)!];
    const expected = (test: (time: string) => boolean) => all.filter((item) => test(item.properties.datetime)).map(key).sort();
    const at = async (datetime: string) => keys(await search(`?limit=10000&datetime=${encodeURIComponent(datetime)}`)).sort();
    expect(await at(first)).toEqual(expected((time) => time === first));
    expect(await at(`${first}/${first}`)).toEqual(expected((time) => time === first));
    expect(await at(`../${first}`)).toEqual(expected((time) => time <= first));
    expect(await at(`${last}/..`)).toEqual(expected((time) => time >= last));
    expect(await at(`${last}/`)).toEqual(expected((time) => time >= last));
    expect(await at(`${first}/${last}`)).toEqual(all.map(key).sort());
    expect(await at('1999-01-01T00:00:00Z/2000-01-01T00:00:00+01:00')).toEqual([]);
    expect(keys(await searchPost({ datetime: `../${first}`, limit: 10000 })).sort()).toEqual(expected((time) => time <= first));
  });

  it('reads a plain date as its whole UTC day, in GET and POST alike', async () => {
    const dayOf = (time: string) => new Date(time).toISOString().slice(0, 10);
    const day = dayOf(all[0]!.properties.datetime);
    const expected = all.filter((item) => dayOf(item.properties.datetime) === day).map(key).sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(keys(await search(`?limit=10000&datetime=${day}`)).sort()).toEqual(expected);
    expect(keys(await searchPost({ datetime: `${day}/${day}`, limit: 10000 })).sort()).toEqual(expected);
  });

  it('filters by ids and collections, alone and together', async () => {
    expect(keys(await search('?ids=countries-110m,land-110m')).sort()).toEqual(['natural-earth.countries/countries-110m', 'natural-earth.land/land-110m']);
    expect(keys(await search('?collections=natural-earth.countries'))).toEqual(['natural-earth.countries/countries-110m', 'natural-earth.countries/countries-50m', 'natural-earth.countries/countries-10m']);
    expect(keys(await search('?collections=natural-earth.countries,natural-earth.land&ids=land-10m,countries-10m')).sort()).toEqual(['natural-earth.countries/countries-10m', 'natural-earth.land/land-10m']);
    expect(keys(await searchPost({ collections: ['natural-earth.land'], ids: ['land-50m'] }))).toEqual(['natural-earth.land/land-50m']);
    expect((await search('?collections=nowhere.at-all')).features).toEqual([]);
  });

  it('finds Items by free text: the dataset\'s words or the file\'s own name, its own file ranked first; terms separated by commas are alternatives', async () => {
    const coast = keys(await search('?q=coastline&limit=100'));
    expect(coast.slice(0, 3).sort()).toEqual(['natural-earth.coastlines/coastline-10m', 'natural-earth.coastlines/coastline-110m', 'natural-earth.coastlines/coastline-50m']);
    const small = keys(await search('?q=110m&limit=100'));
    expect(small).toEqual(expect.arrayContaining(['natural-earth.countries/countries-110m', 'natural-earth.land/land-110m', 'natural-earth.coastlines/coastline-110m']));
    expect(small.indexOf('natural-earth.countries/countries-110m')).toBeLessThan(small.indexOf('natural-earth.countries/countries-50m'));
    const megacities = keys(await search('?q=megacities&limit=100'));
    const capitals = keys(await search('?q=capitals&limit=100'));
    expect(megacities.length).toBeGreaterThan(0);
    expect(capitals.length).toBeGreaterThan(0);
    expect(keys(await search('?q=megacities,capitals&limit=100')).sort()).toEqual([...new Set([...megacities, ...capitals])].sort());
    expect(keys(await searchPost({ q: ['megacities', 'capitals'], limit: 100 })).sort()).toEqual([...new Set([...megacities, ...capitals])].sort());
    expect((await search('?q=zzzznothing')).numberMatched).toBe(0);
  });

  it('answers a free-text search the same whatever was searched before it (each search reuses its index\'s buffers)', async () => {
    const first = await search('?q=cities&limit=100');
    const between = [await search('?q=coast,110m&limit=100'), await search('?q=c&limit=100'), await search('?bbox=-10,35,30,60&limit=100'), await search('?q=zzzznothing')];
    const again = await search('?q=cities&limit=100');
    expect(keys(again)).toEqual(keys(first));
    expect(again.numberMatched).toBe(first.numberMatched);
    expect(between.map((answer) => answer.numberMatched)).not.toContain(first.numberMatched);
    expect(keys(await search('?q=coast,110m&limit=100'))).toEqual(keys(between[0]!));
  });

  it('sorts by sortby, GET +/- keys and POST {field, direction}, ties in catalog order', async () => {
    const byDateThenId = [...all].sort((a, b) => (a.properties.datetime < b.properties.datetime ? 1 : a.properties.datetime > b.properties.datetime ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const sorted = await search('?limit=10000&sortby=-datetime,%2Bid');
    expect(sorted.features.map((item) => [item.properties.datetime, item.id])).toEqual(byDateThenId.map((item) => [item.properties.datetime, item.id]));
    const posted = await searchPost({ limit: 10000, sortby: [{ field: 'id', direction: 'desc' }] });
    const ids = posted.features.map((item) => item.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const titles = (await search('?limit=10000&sortby=properties.title')).features.map((item) => item.properties.title!.toLowerCase());
    expect(titles).toEqual([...titles].sort());
  });

  it('walks GET next links to the end and gets every Item exactly once', async () => {
    const seen: string[] = [];
    let next: string | undefined = `${BASE}/stac/api/search?limit=4&bbox=-180,-90,180,90`;
    while (next) {
      const page = await search(next.slice(`${BASE}/stac/api/search`.length));
      seen.push(...keys(page));
      next = page.links.find((link) => link.rel === 'next')?.href;
    }
    expect(seen.sort()).toEqual(all.map(key).sort());
  });

  it('walks POST next links, merging their body into the request, to the end and gets every Item exactly once', async () => {
    const original = { limit: 3, sortby: [{ field: 'title', direction: 'asc' }] };
    const seen: string[] = [];
    let body: Record<string, unknown> | undefined = original;
    while (body) {
      const page: StacItemCollection = await searchPost(body);
      seen.push(...keys(page));
      const next: StacLink | undefined = page.links.find((link) => link.rel === 'next');
      if (next) {
        expect(next).toMatchObject({ method: 'POST', merge: true, href: `${BASE}/stac/api/search` });
        body = { ...original, ...(next.body as object) };
      } else body = undefined;
    }
    expect(seen.length).toBe(all.length);
    expect(seen.sort()).toEqual(all.map(key).sort());
  });

  it(`reads a limit above ${MAX_ITEM_LIMIT} as ${MAX_ITEM_LIMIT} rather than refusing it`, async () => {
    const page = await search('?limit=50000');
    expect(page.numberReturned).toBe(Math.min(all.length, MAX_ITEM_LIMIT));
    expect(page.links.find((link) => link.rel === 'self')!.href).toContain(`limit=${MAX_ITEM_LIMIT}`);
  });
});

describe('bad requests get a clear 400, 404, 405 or 413 and never a 500', () => {
  const bowTie = { type: 'Polygon', coordinates: [[[0, 0], [10, 10], [10, 0], [0, 10], [0, 0]]] };
  const huge = { type: 'Polygon', coordinates: [Array.from({ length: 400_000 }, (_, index) => [index % 180, (index % 90) - 0.123456789])] };
  const cases: [string, () => Promise<Response>, number, RegExp][] = [
    ['bbox with 3 numbers', () => request('/stac/api/search?bbox=1,2,3'), 400, /bbox.*4 numbers/],
    ['bbox with south > north', () => request('/stac/api/search?bbox=0,10,1,5'), 400, /south \(10\).*north \(5\)/],
    ['bbox out of range', () => request('/stac/api/search?bbox=0,0,200,10'), 400, /longitudes/],
    ['bbox that is not numbers', () => request('/stac/api/search?bbox=a,b,c,d'), 400, /numbers/],
    ['limit=abc', () => request('/stac/api/search?limit=abc'), 400, /limit.*integer/],
    ['limit=0', () => request('/stac/api/collections/natural-earth.land/items?limit=0'), 400, /limit/],
    ['datetime=yesterday', () => request('/stac/api/search?datetime=yesterday'), 400, /datetime.*RFC 3339/],
    ['datetime on 31 February', () => request('/stac/api/search?datetime=2026-02-31T00:00:00Z'), 400, /datetime/],
    ['datetime open at both ends', () => request('/stac/api/search?datetime=../..'), 400, /both ends/],
    ['datetime interval ending before it starts', () => request('/stac/api/search?datetime=2026-01-02T00:00:00Z/2026-01-01T00:00:00Z'), 400, /ends? before/],
    ['bbox and intersects together', () => postSearch({ bbox: [0, 0, 1, 1], intersects: { type: 'Point', coordinates: [0, 0] } }), 400, /bbox or intersects/],
    ['intersects that is not GeoJSON', () => request('/stac/api/search?intersects=%7Bnope'), 400, /intersects/],
    ['intersects with an unclosed ring', () => postSearch({ intersects: { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] } }), 400, /end where it starts/],
    ['intersects that GEOS calls invalid', () => postSearch({ intersects: bowTie }), 400, /not a valid geometry.*Self-intersection/],
    ['a 10 MB intersects in a POST body', () => postSearch({ intersects: huge }), 413, /larger than 1048576 bytes/],
    ['a 10 MB intersects in a GET query', () => request(`/stac/api/search?intersects=${encodeURIComponent(JSON.stringify(huge))}`), 400, /longer than/],
    ['too many positions in intersects', () => postSearch({ intersects: { type: 'MultiPoint', coordinates: Array.from({ length: 20_001 }, () => [1, 1]) } }), 400, /at most 20000 positions/],
    ['a body that is not JSON', () => postSearch('bbox=1,2,3,4'), 400, /not JSON/],
    ['an unknown body field', () => postSearch({ filter: {} }), 400, /filter/],
    ['an unknown query parameter', () => request('/stac/api/search?bboxx=1,2,3,4'), 400, /unknown query parameter "bboxx"/],
    ['a repeated query parameter', () => request('/stac/api/search?limit=1&limit=2'), 400, /more than once/],
    ['an unknown sortby field', () => request('/stac/api/search?sortby=-cloud_cover'), 400, /cannot sort on "cloud_cover"/],
    ['an unknown sortby field in POST', () => postSearch({ sortby: [{ field: 'eo:cloud_cover', direction: 'asc' }] }), 400, /cannot sort on/],
    ['a token that is not ours', () => request('/stac/api/search?token=abc'), 400, /token.*not a page token/],
    ['an unknown collection', () => request('/stac/api/collections/natural-earth.atlantis'), 404, /no Collection "natural-earth.atlantis"/],
    ['the items of an unknown collection', () => request('/stac/api/collections/natural-earth.atlantis/items'), 404, /no Collection/],
    ['an unknown item', () => request('/stac/api/collections/natural-earth.countries/items/countries-1m'), 404, /no Item "countries-1m"/],
    ['an unknown version of an item', () => request('/stac/api/collections/natural-earth.countries/items/countries-110m@9.9.9'), 404, /no version "9.9.9"/],
    ['an unknown path', () => request('/stac/api/aggregate'), 404, /Nothing is at/],
    ['DELETE on search', () => request('/stac/api/search', { method: 'DELETE' }), 405, /DELETE is not allowed/],
    ['POST on a collection', () => request('/stac/api/collections/natural-earth.land', { method: 'POST', body: '{}' }), 405, /accepts GET, HEAD/],
  ];

  it.each(cases)('%s', async (_, send, status, description) => {
    const response = await send();
    const body = (await response.json()) as { code: string; description: string };
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(Object.keys(body).sort()).toEqual(['code', 'description']);
    expect(body.description).toMatch(description);
    if (status === 405) expect(response.headers.get('allow')).toMatch(/GET/);
  });

  it('refuses a token from another search, and one from another build of the catalog', async () => {
    const next = (await search('?limit=2')).links.find((link) => link.rel === 'next')!;
    const token = new URL(next.href).searchParams.get('token')!;
    const other = await request(`/stac/api/search?limit=2&bbox=0,0,10,10&token=${token}`);
    expect(other.status).toBe(400);
    expect(((await other.json()) as { description: string }).description).toMatch(/different search/);
    const [version, offset, digest] = JSON.parse(Buffer.from(token, 'base64url').toString()) as [number, number, string, string];
    const stale = Buffer.from(JSON.stringify([version, offset, digest, '0000000000000000'])).toString('base64url');
    const answer = await request(`/stac/api/search?limit=2&token=${stale}`);
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { description: string }).description).toMatch(/another build of the catalog/);
  });
});

describe('the OpenAPI document (service-desc)', () => {
  it('is served as OpenAPI 3.1 JSON and passes the recommended lint rules without a warning', async () => {
    const response = await request('/stac/api/openapi');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.oai.openapi+json;version=3.1');
    const document = (await response.json()) as { openapi: string; paths: Record<string, Record<string, { operationId: string }>>; servers: { url: string }[] };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers[0]!.url).toBe(BASE);
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
    expect(problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)).toEqual([]);
    expect(STAC_API_ROUTES.map((route) => document.paths[route.path]?.[route.method.toLowerCase()]?.operationId)).toEqual(STAC_API_ROUTES.map((route) => route.id));
  });
});
