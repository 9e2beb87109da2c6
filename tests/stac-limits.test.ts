import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_COLLECTION_LIMIT, MAX_ITEM_LIMIT } from '../core/api/stac/params.ts';
import { createCatalogIndex, type CatalogIndex } from '../core/catalog-index.ts';
import { MAX_JSON_DEPTH } from '../core/json-depth.ts';
import { createSearchDocument, scoreDocument } from '../core/search.ts';
import { OWN_FILE_WEIGHT } from '../core/api/stac/text-index.ts';
import { tokenize } from '../core/text.ts';
import { configureFootprintTester } from '../runtime/geometry-intersects.ts';
import { readModel } from '../runtime/model-file.ts';
import type { StacItemCollection } from '../schemas/stac-api.ts';
import {
  MAX_FREE_TEXT_LENGTH, MAX_FREE_TEXT_TERMS, MAX_FREE_TEXT_WORDS, MAX_INTERSECTS_PARTS, MAX_INTERSECTS_POSITIONS, MAX_INTERSECTS_RINGS, MAX_PAGE_TOKEN_LENGTH,
  MAX_SEARCH_NAMES, MAX_SORT_KEYS,
} from '../schemas/stac-api.ts';
import { readSampleJson, sampleConfig, sampleServer } from './helpers/sample.ts';

const server = sampleServer();
afterAll(() => server.close());

function request(path: string, init: RequestInit = {}): Promise<Response> {
  return Promise.resolve(server.fetch(new Request(`http://localhost${path}`, init)));
}

function postSearch(body: unknown): Promise<Response> {
  return request('/stac/api/search', { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
}

async function page(response: Response): Promise<StacItemCollection> {
  const body = (await response.json()) as StacItemCollection;
  expect(response.status, JSON.stringify(body).slice(0, 300)).toBe(200);
  return body;
}

const keys = (found: StacItemCollection) => found.features.map((item) => `${item.collection}/${item.id}`);
const words = (count: number, prefix = 'w') => Array.from({ length: count }, (_, index) => `${prefix}${index}`);
const ids = (count: number) => Array.from({ length: count }, (_, index) => `item-${index}`);
const sortKeys = (count: number) => Array.from({ length: count }, (_, index) => ({ field: ['id', 'collection', 'datetime', 'title', 'properties.title'][index % 5]!, direction: 'asc' }));

/** A closed ring of `count` positions (the last repeating the first) along the edges of a box, its corners among them. */
function boxOutline([west, south, east, north]: number[], count: number): number[][] {
  const corners = [[west!, south!], [east!, south!], [east!, north!], [west!, north!]];
  const ring = corners.flatMap((corner, side) => {
    const next = corners[(side + 1) % 4]!;
    const steps = Math.floor((count - 1) / 4) + (side < (count - 1) % 4 ? 1 : 0);
    return Array.from({ length: steps }, (_, step) => [corner[0]! + ((next[0]! - corner[0]!) * step) / steps, corner[1]! + ((next[1]! - corner[1]!) * step) / steps]);
  });
  return [...ring, ring[0]!];
}

/** `count` thin strips side by side across a box, a hairline apart: together they cover it all but the hairlines. */
function strips([west, south, east, north]: number[], count: number): number[][][][] {
  const width = (east! - west!) / count;
  return Array.from({ length: count }, (_, index) => {
    const left = west! + index * width;
    const right = left + width - 1e-7;
    return [[[left, south!], [right, south!], [right, north!], [left, north!], [left, south!]]];
  });
}

/** A box with `holes` tiny holes along its bottom edge. */
function boxWithHoles([west, south, east, north]: number[], holes: number): number[][][] {
  const step = (east! - west!) / (holes + 1);
  const hole = (index: number) => {
    const x = west! + step * (index + 1);
    return [[x, south! + 0.01], [x, south! + 0.02], [x + step / 4, south! + 0.02], [x + step / 4, south! + 0.01], [x, south! + 0.01]];
  };
  return [[[west!, south!], [east!, south!], [east!, north!], [west!, north!], [west!, south!]], ...Array.from({ length: holes }, (_, index) => hole(index))];
}

const EUROPE = [-10, 35, 30, 60];

describe('every limit of a search is a 400 in the STAC error shape that names the limit', () => {
  const nested = (depth: number) => `{"ids":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
  const cases: [string, () => Promise<Response>, RegExp][] = [
    [`q with more than ${MAX_FREE_TEXT_TERMS} terms (POST)`, () => postSearch({ q: words(MAX_FREE_TEXT_TERMS + 1) }), new RegExp(`${MAX_FREE_TEXT_TERMS} terms`)],
    [`q with more than ${MAX_FREE_TEXT_TERMS} terms (GET)`, () => request(`/stac/api/search?q=${words(MAX_FREE_TEXT_TERMS + 1).join(',')}`), new RegExp(`at most ${MAX_FREE_TEXT_TERMS} terms`)],
    [`q with more than ${MAX_FREE_TEXT_WORDS} words (POST)`, () => postSearch({ q: words(MAX_FREE_TEXT_WORDS + 1).join(' ') }), new RegExp(`at most ${MAX_FREE_TEXT_WORDS} words`)],
    [`q with more than ${MAX_FREE_TEXT_WORDS} words over several terms (GET)`, () => request(`/stac/api/search?q=${encodeURIComponent(`${words(MAX_FREE_TEXT_WORDS).join(' ')},extra`)}`), new RegExp(`at most ${MAX_FREE_TEXT_WORDS} words`)],
    [`q longer than ${MAX_FREE_TEXT_LENGTH} characters (POST)`, () => postSearch({ q: 'a'.repeat(MAX_FREE_TEXT_LENGTH + 1) }), new RegExp(`${MAX_FREE_TEXT_LENGTH} characters`)],
    [`q terms longer than ${MAX_FREE_TEXT_LENGTH} characters together (POST)`, () => postSearch({ q: ['a'.repeat(MAX_FREE_TEXT_LENGTH), 'b'] }), new RegExp(`at most ${MAX_FREE_TEXT_LENGTH} characters`)],
    [`q longer than ${MAX_FREE_TEXT_LENGTH} characters (GET)`, () => request(`/stac/api/search?q=${'a'.repeat(MAX_FREE_TEXT_LENGTH + 1)}`), new RegExp(`at most ${MAX_FREE_TEXT_LENGTH} characters`)],
    [`more than ${MAX_SEARCH_NAMES} ids (POST)`, () => postSearch({ ids: ids(MAX_SEARCH_NAMES + 1) }), new RegExp(`${MAX_SEARCH_NAMES} item ids`)],
    [`more than ${MAX_SEARCH_NAMES} ids (GET)`, () => request(`/stac/api/search?ids=${ids(MAX_SEARCH_NAMES + 1).join(',')}`), new RegExp(`at most ${MAX_SEARCH_NAMES}`)],
    [`more than ${MAX_SEARCH_NAMES} collections (POST)`, () => postSearch({ collections: ids(MAX_SEARCH_NAMES + 1) }), new RegExp(`${MAX_SEARCH_NAMES} collection ids`)],
    ['a bbox of 7 numbers', () => postSearch({ bbox: [0, 0, 1, 1, 2, 2, 3] }), /more than 6 numbers/],
    ['a bbox of 100,000 numbers', () => postSearch({ bbox: Array.from({ length: 100_000 }, () => 1) }), /more than 6 numbers/],
    [`more than ${MAX_SORT_KEYS} sort keys (POST)`, () => postSearch({ sortby: sortKeys(MAX_SORT_KEYS + 1) }), new RegExp(`more than ${MAX_SORT_KEYS} keys`)],
    [`more than ${MAX_SORT_KEYS} sort keys (GET)`, () => request(`/stac/api/search?sortby=${sortKeys(MAX_SORT_KEYS + 1).map((key) => key.field).join(',')}`), new RegExp(`at most ${MAX_SORT_KEYS} keys`)],
    [`a token longer than ${MAX_PAGE_TOKEN_LENGTH} characters`, () => postSearch({ token: 'a'.repeat(MAX_PAGE_TOKEN_LENGTH + 1) }), new RegExp(`${MAX_PAGE_TOKEN_LENGTH} characters`)],
    [`a body nested ${MAX_JSON_DEPTH + 1} deep`, () => postSearch(nested(MAX_JSON_DEPTH + 1)), new RegExp(`more than ${MAX_JSON_DEPTH} deep`)],
    ['a body of 1 MiB of nested arrays', () => postSearch('['.repeat(512 * 1024 - 8) + ']'.repeat(512 * 1024 - 8)), new RegExp(`more than ${MAX_JSON_DEPTH} deep`)],
    [`an intersects nested more than ${MAX_JSON_DEPTH} deep (GET)`, () => request(`/stac/api/search?intersects=${encodeURIComponent(`{"type":"Point","coordinates":${'['.repeat(40)}${']'.repeat(40)}}`)}`), new RegExp(`more than ${MAX_JSON_DEPTH} deep`)],
    [`a polygon of ${MAX_INTERSECTS_POSITIONS + 1} positions`, () => postSearch({ intersects: { type: 'Polygon', coordinates: [boxOutline(EUROPE, MAX_INTERSECTS_POSITIONS + 1)] } }), new RegExp(`has ${MAX_INTERSECTS_POSITIONS + 1} positions; at most ${MAX_INTERSECTS_POSITIONS} positions`)],
    [`a MultiPolygon of ${MAX_INTERSECTS_PARTS + 1} parts`, () => postSearch({ intersects: { type: 'MultiPolygon', coordinates: strips(EUROPE, MAX_INTERSECTS_PARTS + 1) } }), new RegExp(`at most ${MAX_INTERSECTS_PARTS} parts`)],
    ['a MultiPolygon of 4,000 parts', () => postSearch({ intersects: { type: 'MultiPolygon', coordinates: strips(EUROPE, 4000) } }), new RegExp(`has 4000 parts; at most ${MAX_INTERSECTS_PARTS} parts`)],
    [`a MultiPoint of ${MAX_INTERSECTS_PARTS + 1} points (GET)`, () => request(`/stac/api/search?intersects=${encodeURIComponent(JSON.stringify({ type: 'MultiPoint', coordinates: ids(MAX_INTERSECTS_PARTS + 1).map((_, index) => [index % 180, 0]) }))}`), new RegExp(`at most ${MAX_INTERSECTS_PARTS} parts`)],
    [`a GeometryCollection of more than ${MAX_INTERSECTS_PARTS} parts in all`, () => postSearch({ intersects: { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [0, 0] }, { type: 'MultiPolygon', coordinates: strips(EUROPE, MAX_INTERSECTS_PARTS) }] } }), new RegExp(`has ${MAX_INTERSECTS_PARTS + 1} parts`)],
    [`a polygon of ${MAX_INTERSECTS_RINGS + 1} rings`, () => postSearch({ intersects: { type: 'Polygon', coordinates: boxWithHoles(EUROPE, MAX_INTERSECTS_RINGS) } }), new RegExp(`at most ${MAX_INTERSECTS_RINGS} rings`)],
  ];

  it.each(cases)('%s', async (_, send, limit) => {
    const response = await send();
    const body = (await response.json()) as { code: string; description: string };
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(body).toEqual({ code: 'InvalidParameterValue', description: expect.stringMatching(limit) });
  });
});

describe('a search at each limit is answered as before', () => {
  let everything: string[];
  beforeAll(async () => {
    everything = keys(await page(await request(`/stac/api/search?limit=${MAX_ITEM_LIMIT}`)));
  });

  it(`answers q of ${MAX_FREE_TEXT_TERMS} terms and ${MAX_FREE_TEXT_WORDS} words, the best-matching term deciding each Item's rank`, async () => {
    const terms = ['natural', 'countries', ...words(MAX_FREE_TEXT_TERMS - 2, 'zz')];
    expect(terms.flatMap((term) => tokenize(term)).length).toBe(MAX_FREE_TEXT_WORDS);
    const atLimit = await page(await postSearch({ q: terms, limit: MAX_ITEM_LIMIT }));
    expect(keys(atLimit)).toEqual(keys(await page(await postSearch({ q: terms.slice(0, 2), limit: MAX_ITEM_LIMIT }))));
    expect(atLimit.numberMatched).toBeGreaterThan(0);
  });

  it(`answers q of ${MAX_FREE_TEXT_LENGTH} characters`, async () => {
    const q = `countries,${'x'.repeat(MAX_FREE_TEXT_LENGTH - 'countries,'.length)}`;
    expect(q).toHaveLength(MAX_FREE_TEXT_LENGTH);
    expect(keys(await page(await request(`/stac/api/search?q=${encodeURIComponent(q)}&limit=${MAX_ITEM_LIMIT}`)))).toEqual(keys(await page(await request(`/stac/api/search?q=countries&limit=${MAX_ITEM_LIMIT}`))));
  });

  it(`answers ${MAX_SEARCH_NAMES} ids and ${MAX_SEARCH_NAMES} collections, and ${MAX_SORT_KEYS} sort keys`, async () => {
    const found = await page(await postSearch({ ids: ['countries-110m', ...ids(MAX_SEARCH_NAMES - 1)], collections: ['natural-earth.countries', ...ids(MAX_SEARCH_NAMES - 1)] }));
    expect(keys(found)).toEqual(['natural-earth.countries/countries-110m']);
    const sorted = (await page(await postSearch({ sortby: sortKeys(MAX_SORT_KEYS), limit: MAX_ITEM_LIMIT }))).features.map((item) => item.id);
    expect(sorted).toEqual([...sorted].sort());
    expect(sorted).toHaveLength(everything.length);
  });

  it(`reads a body nested ${MAX_JSON_DEPTH} deep, and brackets inside strings do not count`, async () => {
    const deep = await postSearch(`{"ids":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`);
    expect(((await deep.json()) as { description: string }).description).toMatch(/ids/);
    const bracketed = await page(await postSearch({ q: `countries ${'['.repeat(100)} \\"{{{{`, limit: MAX_ITEM_LIMIT }));
    expect(keys(bracketed)).toEqual(keys(await page(await request(`/stac/api/search?q=countries&limit=${MAX_ITEM_LIMIT}`))));
  });

  it.each([
    [`a polygon of ${MAX_INTERSECTS_POSITIONS} positions along a box`, { type: 'Polygon', coordinates: [boxOutline(EUROPE, MAX_INTERSECTS_POSITIONS)] }],
    [`a MultiPolygon of ${MAX_INTERSECTS_PARTS} strips across a box`, { type: 'MultiPolygon', coordinates: strips(EUROPE, MAX_INTERSECTS_PARTS) }],
    [`a box with ${MAX_INTERSECTS_RINGS - 1} tiny holes`, { type: 'Polygon', coordinates: boxWithHoles(EUROPE, MAX_INTERSECTS_RINGS - 1) }],
  ])('matches %s as the bbox of that box', async (_, intersects) => {
    const byBox = keys(await page(await request(`/stac/api/search?bbox=${EUROPE.join(',')}&limit=${MAX_ITEM_LIMIT}`)));
    expect(byBox.length).toBeGreaterThan(0);
    expect(byBox.length).toBeLessThan(everything.length);
    expect(keys(await page(await postSearch({ intersects, limit: MAX_ITEM_LIMIT })))).toEqual(byBox);
  });

  it(`reads a limit above ${MAX_ITEM_LIMIT} Items, or ${MAX_COLLECTION_LIMIT} Collections, as that many`, async () => {
    const items = await page(await request('/stac/api/search?limit=100000'));
    expect(items.links.find((link) => link.rel === 'self')!.href).toContain(`limit=${MAX_ITEM_LIMIT}`);
    const collections = await request('/stac/api/collections?limit=100000');
    expect(((await collections.json()) as { links: { rel: string; href: string }[] }).links.find((link) => link.rel === 'self')!.href).toContain(`limit=${MAX_COLLECTION_LIMIT}`);
  });
});

describe('free text ranks Items as /api\'s scorer does, word by word over the dataset and the Item\'s own file', () => {
  let index: CatalogIndex;
  let catalogOrder: string[];
  beforeAll(async () => {
    const stored = readModel(sampleConfig().distDir).file;
    index = createCatalogIndex(stored.model, stored.settings);
    catalogOrder = keys(await page(await request(`/stac/api/search?limit=${MAX_ITEM_LIMIT}`)));
  });

  /** The ranking the free-text extension promises, computed by brute force with /api's scoreDocument. */
  function expectedRanking(q: string): string[] {
    const terms = q.split(',').map((term) => [...new Set(tokenize(term))]).filter((term) => term.length > 0);
    const scored = index.model.collections.flatMap((collection) => collection.datasets.flatMap((dataset) => {
      const shared = createSearchDocument(dataset);
      return dataset.files.map((file) => {
        const own = { dataset, fields: [{ weight: OWN_FILE_WEIGHT, tokens: [...new Set(tokenize(`${file.name} ${file.slug} ${file.layer_name ?? ''}`))] }], foldedTags: {} };
        const termScore = (term: string[]) => {
          const scores = term.map((word) => Math.max(scoreDocument(shared, [word]), scoreDocument(own, [word])));
          return scores.includes(0) ? 0 : scores.reduce((sum, score) => sum + score, 0);
        };
        return { key: `${collection.slug}.${dataset.slug}/${file.slug}`, score: Math.max(0, ...terms.map(termScore)) };
      });
    }));
    const position = new Map(catalogOrder.map((key, at) => [key, at]));
    return scored.filter(({ score }) => score > 0).sort((a, b) => b.score - a.score || position.get(a.key)! - position.get(b.key)!).map(({ key }) => key);
  }

  /** Queries a user might type: whole words, prefixes, several words, alternatives, and seeded random picks from the sample's own words. */
  function queries(): string[] {
    const vocabulary = [...new Set(index.model.collections.flatMap((collection) => collection.datasets.flatMap((dataset) => tokenize(`${dataset.name} ${dataset.description ?? ''}`))))].sort();
    let seed = 22;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const pick = () => {
      const word = vocabulary[Math.floor(random() * vocabulary.length)]!;
      return random() < 0.3 ? word.slice(0, 1 + Math.floor(random() * word.length)) : word;
    };
    const picked = Array.from({ length: 40 }, () => Array.from({ length: 1 + Math.floor(random() * 2) }, () => Array.from({ length: 1 + Math.floor(random() * 3) }, pick).join(' ')).join(','));
    return ['countries', 'natural earth,geonames', 'c', 'e', '1', '110m', 'pop', 'cap', 'admin boundaries', 'geo', 'places', 'cities,population', 'land,ocean,coast', 'côte', 'zzz', ...picked];
  }

  it('gives the same Items in the same order for ordinary queries and seeded random ones', async () => {
    for (const q of queries()) {
      const found = keys(await page(await request(`/stac/api/search?q=${encodeURIComponent(q)}&limit=${MAX_ITEM_LIMIT}`)));
      expect(found, q).toEqual(expectedRanking(q));
    }
  });
});

describe('the geometry thread', () => {
  const triangle = { type: 'Polygon', coordinates: [[[-130, 10], [-110, 10], [-130, 30], [-130, 10]]] };
  afterAll(() => configureFootprintTester({}));

  it('answers 503 with Retry-After to an intersects search that outlasts its deadline, then tests the next one on a new thread', async () => {
    configureFootprintTester({ deadlineMs: 1 });
    const late = await postSearch({ intersects: { type: 'Polygon', coordinates: [boxOutline(EUROPE, MAX_INTERSECTS_POSITIONS)] } });
    expect(late.status).toBe(503);
    expect(late.headers.get('retry-after')).toBe('1');
    expect(await late.json()).toEqual({ code: 'ServiceUnavailable', description: expect.stringMatching(/longer than 1 ms/) });
    configureFootprintTester({});
    const answered = await page(await postSearch({ intersects: triangle }));
    expect(answered.numberMatched).toBeGreaterThan(0);
  });

  it('answers 503 at once to intersects searches beyond the queue, and every other one in full', async () => {
    configureFootprintTester({ maxQueued: 1 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => postSearch({ intersects: triangle })));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses).toContain(503);
    expect(statuses).toContain(200);
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    const refused = answers.find((answer) => answer.status === 503)!;
    expect(((await refused.json()) as { description: string }).description).toMatch(/waiting for the geometry thread/);
  });
});

describe('the OpenAPI document states every limit', () => {
  type Schema = { maxItems?: number; maxLength?: number; description?: string; anyOf?: Schema[]; items?: Schema; properties?: Record<string, Schema> };
  let document: { paths: Record<string, Record<string, { parameters?: { name: string; schema: Schema; description?: string }[] }>>; components: { schemas: Record<string, Schema> } };
  beforeAll(async () => {
    document = (await (await request('/stac/api/openapi')).json()) as typeof document;
  });

  it('gives the POST body maxItems and maxLength', () => {
    const body = document.components.schemas.StacSearchBody!.properties!;
    expect(body.ids!.maxItems).toBe(MAX_SEARCH_NAMES);
    expect(body.collections!.maxItems).toBe(MAX_SEARCH_NAMES);
    expect(body.bbox!.maxItems).toBe(6);
    expect(body.sortby!.maxItems).toBe(MAX_SORT_KEYS);
    expect(body.token!.maxLength).toBe(MAX_PAGE_TOKEN_LENGTH);
    expect(body.q!.anyOf!.map((variant) => variant.maxLength ?? variant.maxItems)).toEqual([MAX_FREE_TEXT_LENGTH, MAX_FREE_TEXT_TERMS]);
    expect(body.q!.description).toContain(`${MAX_FREE_TEXT_WORDS} words`);
    expect(body.limit!.description).toContain(String(MAX_ITEM_LIMIT));
  });

  it('describes the limits of intersects, with maxItems on its arrays', () => {
    const geometry = document.components.schemas.GeoJsonGeometry!;
    for (const limit of [MAX_INTERSECTS_POSITIONS, MAX_INTERSECTS_PARTS, MAX_INTERSECTS_RINGS]) expect(geometry.description).toContain(String(limit));
    const text = JSON.stringify(geometry);
    for (const limit of [MAX_INTERSECTS_POSITIONS, MAX_INTERSECTS_PARTS, MAX_INTERSECTS_RINGS]) expect(text).toContain(`"maxItems":${limit}`);
  });

  it('gives the GET parameters their maxLength and limits', () => {
    const parameters = new Map(document.paths['/stac/api/search']!.get!.parameters!.map((parameter) => [parameter.name, parameter]));
    expect(parameters.get('q')!.schema.maxLength).toBe(MAX_FREE_TEXT_LENGTH);
    expect(JSON.stringify(parameters.get('q'))).toContain(`${MAX_FREE_TEXT_TERMS} terms, ${MAX_FREE_TEXT_WORDS} words`);
    expect(parameters.get('token')!.schema.maxLength).toBe(MAX_PAGE_TOKEN_LENGTH);
    expect(JSON.stringify(parameters.get('ids'))).toContain(String(MAX_SEARCH_NAMES));
    expect(JSON.stringify(parameters.get('sortby'))).toContain(`at most ${MAX_SORT_KEYS}`);
    expect(JSON.stringify(parameters.get('intersects'))).toContain(`${MAX_INTERSECTS_POSITIONS} positions`);
    expect(JSON.stringify(parameters.get('limit'))).toContain(String(MAX_ITEM_LIMIT));
  });
});
