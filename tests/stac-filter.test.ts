import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeoshelfServer } from '../server/app.ts';
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createStacFilterTest, readStacFilter } from '../core/api/stac/filter.ts';
import { searchStacItems, stacSearchIndex, type StacSortField } from '../core/api/stac/search.ts';
import { createCatalogIndex } from '../core/catalog-index.ts';
import { loadCatalogModel } from '../generator/build.ts';
import { makeTestConfig } from './helpers/catalog.ts';
import { sampleConfig, sampleServer } from './helpers/sample.ts';

interface Item {
  id: string;
  collection: string;
  bbox?: number[];
  properties: { datetime: string; title?: string; description?: string; created: string; version: string; 'table:row_count'?: number; 'proj:code': string | null };
}

let server: GeoshelfServer;
let all: Item[];

async function request(path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const init = body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const response = await server.fetch(new Request(`http://localhost${path}`, init));
  return { status: response.status, body: await response.json() };
}

/** What every page from `path` on holds (`take`), following next links; each page must answer 200. */
async function followPages<T>(path: string, take: (body: any) => T[]): Promise<T[]> {
  const all: T[] = [];
  let at: string | undefined = path;
  while (at) {
    const { status, body } = await request(at);
    expect(status, JSON.stringify(body)).toBe(200);
    all.push(...take(body));
    const next: string | undefined = body.links.find((link: { rel: string }) => link.rel === 'next')?.href;
    at = next && new URL(next).pathname + new URL(next).search;
  }
  return all;
}

/** Every Item a GET search finds. */
const searchAll = (query: string) => followPages<Item>(`/stac/api/search?limit=7&${query}`, (body) => body.features);

const keys = (items: Item[]) => items.map((item) => `${item.collection}/${item.id}`);
const filtered = (filter: string) => searchAll(`filter=${encodeURIComponent(filter)}`);

beforeAll(async () => {
  server = sampleServer();
  all = await searchAll('');
});
afterAll(() => server?.close());

describe('the STAC API Filter extension on item search', () => {
  it('selects by collection, id, title and text functions as the Items say', async () => {
    const collection = all[0]!.collection;
    expect(keys(await filtered(`collection = '${collection}'`))).toEqual(keys(all.filter((item) => item.collection === collection)));
    expect(keys(await filtered("id LIKE 'cities%'"))).toEqual(keys(all.filter((item) => item.id.startsWith('cities'))));
    expect(keys(await filtered("CASEI(title) LIKE CASEI('%COUNT%')"))).toEqual(keys(all.filter((item) => /count/i.test(item.properties.title ?? ''))));
    expect(await filtered("CASEI(title) LIKE '%COUNT%'")).toEqual([]);
    const two = [...new Set(all.map((item) => item.collection))].slice(0, 2);
    const expected = all.filter((item) => two.includes(item.collection) && item.id !== all[0]!.id);
    expect(expected.length).toBeGreaterThan(1);
    expect(keys(await filtered(`collection IN ('${two.join("', '")}') AND NOT (id = '${all[0]!.id}')`))).toEqual(keys(expected));
  });

  it('selects by datetime as the datetime parameter does', async () => {
    const times = all.map((item) => item.properties.datetime).sort();
    const middle = times[Math.floor(times.length / 2)]!;
    const after = await filtered(`T_AFTER(datetime, TIMESTAMP('${middle}'))`);
    expect(keys(after)).toEqual(keys(all.filter((item) => Date.parse(item.properties.datetime) > Date.parse(middle))));
    const during = await filtered(`T_INTERSECTS(datetime, INTERVAL('..', '${middle}'))`);
    expect(keys(during)).toEqual(keys(await searchAll(`datetime=${encodeURIComponent(`../${middle}`)}`)));
  });

  it('selects by the Items\' other properties: row count, CRS, version, times and description', async () => {
    // Each selection must keep some Items and leave others, or it would show nothing.
    const split = (expected: Item[]) => {
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(all.length);
      return keys(expected);
    };
    const counts = all.map((item) => item.properties['table:row_count']).filter((count) => count !== undefined).sort((a, b) => a - b);
    const middle = counts[Math.floor(counts.length / 2)]!;
    expect(keys(await filtered(`table:row_count > ${middle}`))).toEqual(split(all.filter((item) => item.properties['table:row_count']! > middle)));
    expect(keys(await filtered(`"table:row_count" BETWEEN 1 AND ${middle}`))).toEqual(split(all.filter((item) => (item.properties['table:row_count'] ?? 0) >= 1 && item.properties['table:row_count']! <= middle)));
    expect(keys(await filtered('"table:row_count" IS NULL'))).toEqual(keys(all.filter((item) => item.properties['table:row_count'] === undefined)));
    const crs = all.find((item) => item.properties['proj:code'])!.properties['proj:code'];
    expect(keys(await filtered(`"proj:code" = '${crs}'`))).toEqual(keys(all.filter((item) => item.properties['proj:code'] === crs)));
    const version = all.map((item) => item.properties.version).sort()[0]!;
    expect(keys(await filtered(`version = '${version}'`))).toEqual(split(all.filter((item) => item.properties.version === version)));
    const created = all.map((item) => item.properties.created).sort();
    const first = created[0]!;
    expect(keys(await filtered(`created > TIMESTAMP('${first}')`))).toEqual(keys(all.filter((item) => Date.parse(item.properties.created) > Date.parse(first))));
    const word = /\w{5,}/.exec(all.find((item) => item.properties.description)!.properties.description!)![0];
    expect(keys(await filtered(`CASEI(description) LIKE CASEI('%${word}%')`))).toEqual(split(all.filter((item) => item.properties.description?.toLowerCase().includes(word.toLowerCase()))));
    // A queryable of one kind is refused against a value of another.
    const { status, body } = await request(`/stac/api/search?filter=${encodeURIComponent("table:row_count > 'many'")}`);
    expect(status).toBe(400);
    expect(body.description).toMatch(/cannot compare a number value with a string value/);
  });

  it('sorts by row count both ways and by creation time', async () => {
    for (const [sortby, sign] of [['-table:row_count', -1], ['properties.table:row_count', 1]] as const) {
      const sorted = await followPages<Item>(`/stac/api/search?limit=7&sortby=${sortby}`, (body) => body.features);
      expect(keys(sorted).sort()).toEqual(keys(all).sort());
      const counts = sorted.map((item) => item.properties['table:row_count']);
      const known = counts.filter((count) => count !== undefined);
      expect(new Set(known).size).toBeGreaterThan(2);
      expect(known).toEqual([...known].sort((a, b) => sign * (a - b)));
      expect(counts.slice(known.length).every((count) => count === undefined), `${sortby}: ${counts}`).toBe(true);
    }
    const byCreated = await followPages<Item>('/stac/api/search?limit=7&sortby=properties.created,id', (body) => body.features);
    const expected = [...all].sort((a, b) => Date.parse(a.properties.created) - Date.parse(b.properties.created) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    expect(keys(byCreated)).toEqual(keys(expected));
  });

  it('selects by footprint as bbox and intersects do', async () => {
    expect(keys(await filtered('S_INTERSECTS(geometry, BBOX(-10, 35, 30, 60))'))).toEqual(keys(await searchAll('bbox=-10,35,30,60')));
    const triangle = { type: 'Polygon', coordinates: [[[-125, 25], [-65, 25], [-95, 50], [-125, 25]]] };
    const inside = await filtered('S_INTERSECTS(geometry, POLYGON((-125 25, -65 25, -95 50, -125 25)))');
    expect(inside.length).toBeGreaterThan(0);
    expect(keys(inside)).toEqual(keys(await searchAll(`intersects=${encodeURIComponent(JSON.stringify(triangle))}`)));
    const outside = await filtered('S_DISJOINT(geometry, POLYGON((-125 25, -65 25, -95 50, -125 25)))');
    expect(outside.length + inside.length).toBe(all.length);
  });

  it('reads cql2-json in a POST body as cql2-text in a GET', async () => {
    const text = await filtered("collection LIKE 'geonames%' OR S_INTERSECTS(geometry, BBOX(100, -50, 180, 0))");
    expect(text.length).toBeGreaterThan(0);
    const json = { op: 'or', args: [{ op: 'like', args: [{ property: 'collection' }, 'geonames%'] }, { op: 's_intersects', args: [{ property: 'geometry' }, { bbox: [100, -50, 180, 0] }] }] };
    const { status, body } = await request('/stac/api/search', { filter: json, limit: 1000 });
    expect(status).toBe(200);
    expect(keys(body.features)).toEqual(keys(text));
  });

  it.each([
    ['popul = 5', /no property "popul"; its queryables are id, collection, datetime, title, geometry/],
    ["S_WITHIN(geometry, BBOX(0, 0, 1, 1))", /S_WITHIN is not served: an Item's footprint is its bounding box/],
    ["id = 'x' garbage", /found "garbage" at character 10/],
    ["title > 5", /cannot compare a string value with a number value/],
    ['S_INTERSECTS(geometry, POLYGON((0 0, 10 10, 10 0, 0 10, 0 0)))', /"filter" holds a geometry that is not a valid geometry/],
  ])('refuses %s with a 400 that says what and where', async (filter, message) => {
    const { status, body } = await request(`/stac/api/search?filter=${encodeURIComponent(filter)}`);
    expect(status).toBe(400);
    expect(body.description).toMatch(message);
  });

  it('binds next tokens to the filter: another filter with the token is refused', async () => {
    const first = await request(`/stac/api/search?limit=2&filter=${encodeURIComponent("id LIKE '%'")}`);
    const next = new URL(first.body.links.find((link: { rel: string }) => link.rel === 'next').href);
    next.searchParams.set('filter', "id LIKE 'c%'");
    const refused = await request(next.pathname + next.search);
    expect(refused.status).toBe(400);
    expect(refused.body.description).toMatch(/belongs to a different search/);
  });

  it('filters a Collection\'s items too, and lists the queryables for both', async () => {
    const collection = all.find((item) => all.filter((other) => other.collection === item.collection).length > 1)!.collection;
    const { body } = await request(`/stac/api/collections/${collection}/items?filter=${encodeURIComponent(`id = '${all.find((item) => item.collection === collection)!.id}'`)}`);
    expect(body.features).toHaveLength(1);
    const queryables = await request('/stac/api/queryables');
    expect(Object.keys(queryables.body.properties)).toEqual(['id', 'collection', 'datetime', 'title', 'geometry', 'description', 'created', 'updated', 'version', 'table:row_count', 'proj:code']);
    expect(queryables.body.properties['table:row_count']).toMatchObject({ type: 'integer' });
    expect(queryables.body.properties.created).toMatchObject({ type: 'string', format: 'date-time' });
    // The Filter extension answers queryables as a JSON Schema: valid against the 2020-12 meta-schema.
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validateSchema(queryables.body), JSON.stringify(ajv.errors)).toBe(true);
    expect(ajv.validateSchema((await request('/stac/api/collections/queryables')).body)).toBe(true);
    expect((await request(`/stac/api/collections/${collection}/queryables`)).status).toBe(200);
    expect((await request('/stac/api/collections/no.such/queryables')).status).toBe(404);
    const landing = await request('/stac/api');
    expect(landing.body.conformsTo).toContain('https://api.stacspec.org/v1.0.0/item-search#filter');
    expect(landing.body.links.some((link: { rel: string }) => link.rel === 'http://www.opengis.net/def/rel/ogc/1.0/queryables')).toBe(true);
  });
});

describe('Sortables (STAC API Sort 1.1)', () => {
  /** The fields of the sortables a document links to, after checking they are a JSON Schema 2020-12 that allows no others. */
  const sortablesOf = async (document: { links: { rel: string; href: string }[] }) => {
    const link = document.links.find((candidate) => candidate.rel === 'http://www.opengis.net/def/rel/ogc/1.0/sortables');
    expect(link, 'a sortables link').toBeDefined();
    const { status, body } = await request(new URL(link!.href).pathname);
    expect(status).toBe(200);
    expect(new Ajv2020({ strict: false }).validateSchema(body)).toBe(true);
    expect(body.additionalProperties).toBe(false);
    return Object.keys(body.properties);
  };

  it('lists every field item search sorts on, and those only', async () => {
    const landing = await request('/stac/api');
    expect(landing.body.conformsTo).toEqual(expect.arrayContaining(['https://api.stacspec.org/v1.1.0/item-search#sortables', 'https://api.stacspec.org/v1.0.0/ogcapi-features#sort']));
    const fields = await sortablesOf(landing.body);
    expect(fields).toEqual(expect.arrayContaining(['id', 'datetime', 'title', 'table:row_count', 'version']));
    for (const field of fields) {
      for (const sign of ['', '-']) {
        const { status, body } = await request(`/stac/api/search?limit=250&sortby=${sign}${encodeURIComponent(field)}`);
        expect(status, `${sign}${field}: ${JSON.stringify(body).slice(0, 200)}`).toBe(200);
        expect(body.features).toHaveLength(all.length);
      }
    }
    // A queryable that is not sortable is refused, as the schema's additionalProperties says.
    const queryables = Object.keys((await request('/stac/api/queryables')).body.properties);
    const unsortable = queryables.filter((name) => !fields.includes(name));
    expect(unsortable).toEqual(['geometry']);
    expect((await request('/stac/api/search?sortby=geometry')).status).toBe(400);
  });

  it('sorts a Collection\'s items as its sortables say, and Collection search on its own', async () => {
    const collection = all.find((item) => all.filter((other) => other.collection === item.collection).length > 2)!.collection;
    const document = (await request(`/stac/api/collections/${collection}`)).body;
    expect(await sortablesOf(document)).toEqual(await sortablesOf((await request('/stac/api')).body));
    const queryables = document.links.find((link: { rel: string }) => link.rel === 'http://www.opengis.net/def/rel/ogc/1.0/queryables');
    expect((await request(new URL(queryables.href).pathname)).status).toBe(200);
    const titles = (await followPages<Item>(`/stac/api/collections/${collection}/items?limit=2&sortby=-title`, (body) => body.features)).map((item) => item.properties.title!.toLowerCase());
    expect(titles.length).toBeGreaterThan(2);
    expect(titles).toEqual([...titles].sort().reverse());
    const page = (await request('/stac/api/collections?limit=1')).body;
    const fields = await sortablesOf(page);
    expect(fields).toEqual(['id', 'title']);
    for (const field of fields) expect((await request(`/stac/api/collections?sortby=-${field}`)).status).toBe(200);
    expect((await request('/stac/api/collections?sortby=license')).status).toBe(400);
    expect((await request('/stac/api/collections/no.such/sortables')).status).toBe(404);
  });
});

describe('Items without a footprint or a row count', () => {
  // The sample's Items all have both: a dataset read from an API (never measured) has neither, nor a CRS.
  it('have a null geometry and row count, sort after the others either way, and versions sort by their numbers', async () => {
    const config = await makeTestConfig();
    await cp(sampleConfig().cacheDir, config.cacheDir, { recursive: true });
    const apiFile = (slug: string, version: string) => `  - slug: ${slug}\n    name: ${slug}\n    formats:\n      - format: geojson\n        sources:\n          - version: "${version}"\n            api: { url: "https://service.example.org/${slug}" }\n`;
    // "10.0.0" comes before the sample's "2.0.2" as text, after it as a version.
    await writeFile(join(config.catalogDir, 'datasets', 'from-api.yaml'), `slug: from-api\ncollection: natural-earth\nname: From an API\nfiles:\n${apiFile('remote-items', '1')}${apiFile('remote-later', '10.0.0')}`);
    const { model } = await loadCatalogModel({ config });
    const index = createCatalogIndex(model, { baseUrl: 'https://catalog.example.org', storageBaseUrl: 'https://catalog.example.org/data' });
    const search = stacSearchIndex(index);
    const idOf = (position: number) => search.entries[position]!.id;
    const matching = (filter: string) => {
      const test = createStacFilterTest(search, readStacFilter({ filter })!, []);
      return search.entries.map((_, position) => position).filter(test).map(idOf);
    };
    const remote = ['remote-items', 'remote-later'];
    expect(matching('geometry IS NULL')).toEqual(remote);
    expect(matching('"table:row_count" IS NULL')).toEqual(remote);
    expect(matching('NOT ("table:row_count" IS NULL)')).toHaveLength(search.entries.length - 2);
    const sorted = (field: StacSortField, direction: 'asc' | 'desc') => [...searchStacItems(index, { sortby: [{ field, direction }] })];
    for (const direction of ['asc', 'desc'] as const) {
      for (const field of ['properties.table:row_count', 'properties.proj:code', 'properties.description'] as const) {
        const ids = sorted(field, direction).map(idOf);
        expect(ids, `${field} ${direction}`).toHaveLength(search.entries.length);
        expect(ids.slice(-2).sort(), `${field} ${direction}`).toEqual(remote);
      }
    }
    // Versions by their numbers, both ways: each run of equal versions in the order of the numbers in them.
    const runs = (positions: number[]) => positions.map((position) => search.properties.version[position]!).filter((version, at, list) => version !== list[at - 1]);
    const byNumbers = ['1', '2.0.2', '3.0.1', '3.1.0', '10.0.0'];
    expect(new Set(search.properties.version)).toEqual(new Set(byNumbers));
    expect(runs(sorted('properties.version', 'asc'))).toEqual(byNumbers);
    expect(runs(sorted('properties.version', 'desc'))).toEqual([...byNumbers].reverse());
    // Descriptions as text without case, the Items with one first.
    const described = sorted('properties.description', 'asc').slice(0, -2).map((position) => search.entries[position]!.file.description!.toLowerCase());
    expect(described.length).toBeGreaterThan(10);
    expect(described).toEqual([...described].sort());
  }, 120_000);
});

describe('STAC API Collection Search', () => {
  /** Every Collection id a search of /stac/api/collections finds. */
  const collectionsOf = (query: string) => followPages<string>(`/stac/api/collections?limit=3&${query}`, (body) => body.collections.map((collection: { id: string }) => collection.id));
  const catalogOrder = async () => collectionsOf('');
  /** The Collections of some Items, in catalog order. */
  const collectionsOfItems = async (items: Item[]) => {
    const wanted = new Set(items.map((item) => item.collection));
    return (await catalogOrder()).filter((id) => wanted.has(id));
  };

  it('finds the Collections whose Items a bbox, a datetime or free text finds', async () => {
    expect(await collectionsOf('bbox=-10,35,30,60')).toEqual(await collectionsOfItems(await searchAll('bbox=-10,35,30,60')));
    const times = all.map((item) => item.properties.datetime).sort();
    const interval = encodeURIComponent(`${times[0]}/${times[Math.floor(times.length / 3)]}`);
    expect(await collectionsOf(`datetime=${interval}`)).toEqual(await collectionsOfItems(await searchAll(`datetime=${interval}`)));
    const byText = await collectionsOf('q=capital');
    expect(byText.length).toBeGreaterThan(0);
    expect([...byText].sort()).toEqual((await collectionsOfItems(await searchAll('q=capital'))).sort());
  });

  it('filters Collections on their own properties and on their Items\' footprints', async () => {
    const titled = await collectionsOf(`filter=${encodeURIComponent("CASEI(title) LIKE '%capital%'")}`);
    expect(titled.length).toBeGreaterThan(0);
    for (const id of titled) expect((await request(`/stac/api/collections/${id}`)).body.title).toMatch(/capital/i);
    const triangle = 'S_INTERSECTS(geometry, POLYGON((-125 25, -65 25, -95 50, -125 25)))';
    expect(await collectionsOf(`filter=${encodeURIComponent(triangle)}`)).toEqual(await collectionsOfItems(await filtered(triangle)));
    const licensed = await collectionsOf(`filter=${encodeURIComponent("license = 'CC-BY-4.0'")}`);
    expect(licensed.length).toBeGreaterThan(0);
    expect(licensed.length).toBeLessThan((await catalogOrder()).length);
  });

  it('sorts by title or id, and refuses what does not sort or filter Collections', async () => {
    const titles = async (query: string) => Promise.all((await collectionsOf(query)).map(async (id) => (await request(`/stac/api/collections/${id}`)).body.title as string));
    const descending = await titles('sortby=-title');
    const fold = (text: string) => text.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase();
    expect(descending.map(fold)).toEqual([...descending].map(fold).sort().reverse());
    expect((await request('/stac/api/collections?sortby=datetime')).status).toBe(400);
    const datetime = await request(`/stac/api/collections?filter=${encodeURIComponent("datetime > TIMESTAMP('2020-01-01T00:00:00Z')")}`);
    expect(datetime.status).toBe(400);
    expect(datetime.body.description).toMatch(/no property "datetime"/);
    const queryables = await request('/stac/api/collections/queryables');
    expect(Object.keys(queryables.body.properties)).toEqual(['id', 'title', 'description', 'license', 'geometry']);
    expect((await request('/stac/api')).body.conformsTo).toContain('https://api.stacspec.org/v1.0.0-rc.1/collection-search#filter');
  });
});

describe('the STAC API Fields extension on item search', () => {
  const first = async (query: string, body?: unknown) => (await request(`/stac/api/search?limit=2${query}`, body)).body;
  const shape = (item: Record<string, unknown>) => Object.fromEntries(Object.entries(item).map(([key, value]) => [key, key === 'properties' ? Object.keys(value as object).sort() : true]));

  it('returns the fields asked for, as the extension\'s table says', async () => {
    const full = (await first('')).features[0];
    expect(Object.keys(full)).toContain('collection');
    const included = await first(`&fields=${encodeURIComponent('id,properties.datetime')}`);
    expect(shape(included.features[0])).toEqual({ id: true, properties: ['datetime'] });
    const next = new URL(included.links.find((link: { rel: string }) => link.rel === 'next').href);
    expect(next.searchParams.get('fields')).toBe('id,properties.datetime');
    const defaults = (await request('/stac/api/search', { limit: 1, fields: {} })).body.features[0];
    expect(Object.keys(defaults).sort()).toEqual(['assets', 'bbox', 'geometry', 'id', 'links', 'properties', 'stac_version', 'type']);
    expect(Object.keys(defaults.properties)).toEqual(['datetime']);
    const lessDefaults = (await first(`&fields=${encodeURIComponent('-assets,-links')}`)).features[0];
    expect(Object.keys(lessDefaults).sort()).toEqual(['bbox', 'geometry', 'id', 'properties', 'stac_version', 'type']);
  });

  it('reads include and exclude from a POST body, the more specific path winning', async () => {
    const full = (await first('')).features[0];
    const allBut = (await request('/stac/api/search', { limit: 1, fields: { exclude: ['assets'] } })).body.features[0];
    expect(Object.keys(allBut).sort()).toEqual(Object.keys(full).filter((key) => key !== 'assets').sort());
    const lessDatetime = (await request('/stac/api/search', { limit: 1, fields: { include: ['id', 'properties'], exclude: ['properties.datetime'] } })).body.features[0];
    expect(shape(lessDatetime)).toEqual({ id: true, properties: Object.keys(full.properties).filter((key) => key !== 'datetime').sort() });
    const onlyTitle = (await request('/stac/api/search', { limit: 1, fields: { include: ['properties.title'], exclude: ['properties'] } })).body.features[0];
    expect(shape(onlyTitle)).toEqual({ properties: ['title'] });
    expect((await request('/stac/api')).body.conformsTo).toContain('https://api.stacspec.org/v1.0.0/item-search#fields');
    const collection = full.collection as string;
    const items = (await request(`/stac/api/collections/${collection}/items?limit=1&fields=${encodeURIComponent('id,properties.title')}`)).body;
    expect(shape(items.features[0])).toEqual({ id: true, properties: ['title'] });
  });
});
