import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { sampleConfig } from './helpers/sample.ts';
import { TEST_KEYS } from './helpers/queries.ts';

const MEGACITIES = 'geonames.megacities.megacities';
const FILE = join(sampleConfig().dataDir, 'geonames/megacities/3.1.0/megacities.parquet');

let server: GeoshelfServer;
let duck: DuckDBConnection;
let instance: DuckDBInstance;

beforeAll(async () => {
  server = createServer({ config: { ...sampleConfig(), queryKeys: TEST_KEYS }, serveData: true });
  instance = await DuckDBInstance.create(':memory:');
  duck = await instance.connect();
});
afterAll(async () => {
  duck?.closeSync();
  instance?.closeSync();
  await server?.close();
});

async function getJson(path: string): Promise<{ status: number; body: any }> {
  const response = await server.fetch(new Request(`http://localhost${path}`));
  return { status: response.status, body: await response.json() };
}

/** Every feature id a filter selects, following next links. */
async function filteredIds(filter: string, lang = 'cql2-text'): Promise<{ ids: number[]; matched: number | undefined; pages: number }> {
  let url: string | undefined = `/features/collections/${MEGACITIES}/items?limit=100&filter-lang=${lang}&filter=${encodeURIComponent(filter)}`;
  const ids: number[] = [];
  let matched: number | undefined;
  let pages = 0;
  while (url) {
    const { status, body } = await getJson(url);
    expect(status, JSON.stringify(body)).toBe(200);
    matched ??= body.numberMatched;
    ids.push(...body.features.map((feature: { id: number }) => feature.id));
    pages++;
    const next: string | undefined = body.links.find((link: { rel: string }) => link.rel === 'next')?.href;
    url = next && new URL(next).pathname + new URL(next).search;
  }
  return { ids, matched, pages };
}

/** The row numbers DuckDB selects with a WHERE clause written by hand. */
async function duckIds(where: string): Promise<number[]> {
  const rows = (await duck.runAndReadAll(`SELECT file_row_number FROM read_parquet('${FILE}', file_row_number = true) WHERE ${where} ORDER BY 1`)).getRows();
  return rows.map((row) => Number(row[0]));
}

describe('CQL2 filters on OGC API - Features items', () => {
  it.each([
    ['population > 10000000', 'population > 10000000'],
    ["name LIKE 'San%' AND population BETWEEN 1000000 AND 5000000", "name LIKE 'San%' AND population BETWEEN 1000000 AND 5000000"],
    ["country IN ('FR', 'DE', 'GB') OR country = 'JP'", "country IN ('FR', 'DE', 'GB') OR country = 'JP'"],
    ["CASEI(name) = 'tokyo'", "lower(name) = 'tokyo'"],
    ["NOT (country <> 'IN') AND alt_country IS NULL", "country = 'IN' AND alt_country IS NULL"],
    ['population / 1000000 >= 12', 'population / 1000000 >= 12'],
    // The cities are points: a point's bbox covering is its position, so DuckDB's core can say where each lies.
    ['S_INTERSECTS(geometry, BBOX(0, 40, 20, 60))', 'bbox.xmin BETWEEN 0 AND 20 AND bbox.ymin BETWEEN 40 AND 60'],
    ['S_WITHIN(geometry, POLYGON((-10 35, 30 35, 30 70, -10 70, -10 35))) AND population > 2000000', 'bbox.xmin > -10 AND bbox.xmin < 30 AND bbox.ymin > 35 AND bbox.ymin < 70 AND population > 2000000'],
    ['S_INTERSECTS(geometry, BBOX(170, -50, -170, 0))', '(bbox.xmin >= 170 OR bbox.xmin <= -170) AND bbox.ymin BETWEEN -50 AND 0'],
    ['S_DISJOINT(geometry, POLYGON((-30 -60, 60 -60, 60 75, -30 75, -30 -60)))', 'NOT (bbox.xmin BETWEEN -30 AND 60 AND bbox.ymin BETWEEN -60 AND 75)'],
  ])('%s selects what DuckDB selects with the same condition', async (filter, where) => {
    const expected = await duckIds(where);
    const { ids, matched } = await filteredIds(filter);
    expect(ids).toEqual(expected);
    expect(matched).toBe(expected.length);
  });

  it('reads the JSON encoding as the text encoding', async () => {
    const json = JSON.stringify({ op: 'and', args: [{ op: '>', args: [{ property: 'population' }, 5_000_000] }, { op: 's_intersects', args: [{ property: 'geometry' }, { bbox: [60, 0, 150, 60] }] }] });
    const text = await filteredIds('population > 5000000 AND S_INTERSECTS(geometry, BBOX(60, 0, 150, 60))');
    expect(text.ids.length).toBeGreaterThan(10);
    expect((await filteredIds(json, 'cql2-json')).ids).toEqual(text.ids);
  });

  it('pages a filtered collection through next links that keep the filter', async () => {
    const expected = await duckIds('population > 2000000');
    let url: string | undefined = `/features/collections/${MEGACITIES}/items?limit=7&filter=${encodeURIComponent('population > 2000000')}`;
    const ids: number[] = [];
    while (url) {
      const { body } = await getJson(url);
      ids.push(...body.features.map((feature: { id: number }) => feature.id));
      const next: string | undefined = body.links.find((link: { rel: string }) => link.rel === 'next')?.href;
      if (next) expect(new URL(next).searchParams.get('filter')).toBe('population > 2000000');
      url = next && new URL(next).pathname + new URL(next).search;
    }
    expect(ids).toEqual(expected);
  });

  it('binds literals as values: a quote in a string is part of the string', async () => {
    const { status, body } = await getJson(`/features/collections/${MEGACITIES}/items?filter=${encodeURIComponent("name = 'x'' OR ''1''=''1' OR name = 'Tokyo'")}`);
    expect(status).toBe(200);
    expect(body.features.map((feature: { properties: { name: string } }) => feature.properties.name)).toEqual(['Tokyo']);
  });

  it.each([
    ['population >> 5', 'cql2-text', /found ">>" at character 12/],
    ["name = 'Tokyo' garbage", 'cql2-text', /found "garbage" at character 16/],
    ['popul > 5', 'cql2-text', /no property "popul"; its queryables are .*population/],
    ['name > 5', 'cql2-text', /cannot compare a string value with a number value/],
    ["S_INTERSECTS(name, BBOX(0, 0, 1, 1))", 'cql2-text', /needs a geometry here, not a string value/],
    ['A_CONTAINS(name, (1, 2))', 'cql2-text', /array functions are not supported/],
    ['{"op": "=", "args": [{"property": "name"}]}', 'cql2-json', /expected 2 operands of "=", found 1 \(at \/args of the JSON\)/],
    ['{"op": "=",', 'cql2-json', /not JSON/],
  ])('refuses %s with a 400 that says what and where', async (filter, lang, message) => {
    const { status, body } = await getJson(`/features/collections/${MEGACITIES}/items?filter-lang=${lang}&filter=${encodeURIComponent(filter)}`);
    expect(status).toBe(400);
    expect(body.code).toBe('InvalidParameterValue');
    expect(body.description).toMatch(message);
    expect(body.description).not.toMatch(/SELECT|read_parquet|\/work\//);
  });

  it('refuses a geometry literal GEOS calls invalid, saying why', async () => {
    const bowtie = 'S_INTERSECTS(geometry, POLYGON((0 0, 10 10, 10 0, 0 10, 0 0)))';
    const { status, body } = await getJson(`/features/collections/${MEGACITIES}/items?filter=${encodeURIComponent(bowtie)}`);
    expect(status).toBe(400);
    expect(body.description).toMatch(/invalid geometry \(GEOS: Self-intersection/);
  });

  it('refuses another filter-crs and another filter-lang', async () => {
    const crs = await getJson(`/features/collections/${MEGACITIES}/items?filter=${encodeURIComponent('population > 1')}&filter-crs=${encodeURIComponent('http://www.opengis.net/def/crs/EPSG/0/3857')}`);
    expect(crs.status).toBe(400);
    expect((await getJson(`/features/collections/${MEGACITIES}/items?filter=x&filter-lang=ecql`)).status).toBe(400);
  });

  it('declares Part 3 and the CQL2 classes, and lists the geometry among the queryables', async () => {
    const { body } = await getJson('/features/conformance');
    expect(body.conformsTo).toEqual(expect.arrayContaining([
      'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
      'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter',
      'http://www.opengis.net/spec/cql2/1.0/conf/cql2-text',
      'http://www.opengis.net/spec/cql2/1.0/conf/cql2-json',
      'http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2',
      'http://www.opengis.net/spec/cql2/1.0/conf/spatial-functions',
    ]));
    const queryables = await getJson(`/features/collections/${MEGACITIES}/queryables`);
    expect(queryables.body.properties.geometry).toEqual({ format: 'geometry-any', title: 'geometry' });
    expect(queryables.body.properties.population).toEqual({ type: 'integer', title: 'population' });
    expect(new Ajv2020({ strict: false }).validateSchema(queryables.body)).toBe(true);
  });
});
