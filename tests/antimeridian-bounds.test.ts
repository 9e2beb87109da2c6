import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { createExtent, finishLonLatExtent, inspectWkb } from '../core/geo/wkb-inspect.ts';
import { inspectGeoParquet } from '../generator/enrich/inspect-data-file.ts';
import { QueryBoundsSchema, QueryResultSchema } from '../schemas/query.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { getWithToken, post, queryServer, sourceRef } from './helpers/queries.ts';
import { readSampleJson } from './helpers/sample.ts';

const COUNTRIES = join(ROOT, 'catalog-data/data/natural-earth/countries/2.0.2/countries-110m.parquet');
const FIJI = [177.28, -18.29, -179.79, -16.02];

const server = queryServer();
afterAll(() => server.close());

async function boundsOf(sql: string, extra: Record<string, unknown> = {}, file = 'countries-110m'): Promise<number[]> {
  const countries = sourceRef(server, 'countries', 'natural-earth', 'countries', file);
  const response = await post(server, '/api/queries', { sources: [countries], sql, limit: 5, ...extra });
  expect(response.status, await response.clone().text()).toBe(200);
  const result = QueryResultSchema.parse(await response.json());
  const answer = await getWithToken(server, `/api/queries/${result.query_id}/bounds`, result.query_token);
  expect(answer.status).toBe(200);
  return QueryBoundsSchema.parse(await answer.json()).bounds;
}

/** Degrees of longitude a box covers, going east from west to east. */
const widthOf = ([west, , east]: number[]) => (west! > east! ? east! + 360 - west! : east! - west!);

async function readWkb(sql: string): Promise<Uint8Array[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const rows = (await connection.runAndReadAll(sql)).getRows();
  connection.closeSync();
  instance.closeSync();
  return rows.map(([value]) => (value as { bytes: Uint8Array }).bytes);
}

describe('query bounds across the antimeridian', () => {
  it.each([
    ['the bbox covering', {}],
    ['the geometries decoded', { geometry_column: 'geometry' }],
  ])('frame Fiji from 177°E east across ±180° to 179.8°W, through %s', async (_path, extra) => {
    const bounds = await boundsOf("SELECT * FROM countries WHERE name = 'Fiji'", extra);
    expect(bounds[0]).toBeGreaterThan(bounds[2]!);
    bounds.forEach((value, index) => expect(value).toBeCloseTo(FIJI[index]!, 1));
  });

  it.each([
    ['the bbox covering', {}],
    ['the geometries decoded', { geometry_column: 'geometry' }],
  ])('frame Russia from Kaliningrad east to Chukotka, not round the world, through %s', async (_path, extra) => {
    const bounds = await boundsOf("SELECT * FROM countries WHERE name = 'Russia'", extra);
    expect(bounds[0]).toBeGreaterThan(bounds[2]!);
    expect(widthOf(bounds)).toBeLessThan(200);
    expect(bounds[0]).toBeCloseTo(19.6, 0);
    expect(bounds[2]).toBeCloseTo(-169.9, 0);
  });

  it('frame Fiji and New Zealand together as the South Pacific, not the world', async () => {
    const bounds = await boundsOf("SELECT * FROM countries WHERE name IN ('Fiji', 'New Zealand')");
    expect(bounds[0]).toBeCloseTo(166.5, 0);
    expect(bounds[2]).toBeCloseTo(FIJI[2]!, 1);
  });

  it('frame islands on both sides of ±180°, each with a narrow bbox, the same through the covering as decoded', async () => {
    // Every row here is narrow, so the covering path answers from one aggregate (query/bounds.ts readCoveringBounds).
    const sql = "SELECT * FROM countries WHERE name IN ('Vanuatu', 'Tuvalu', 'Tonga', 'Samoa')";
    const covering = await boundsOf(sql, {}, 'countries-10m');
    const decoded = await boundsOf(sql, { geometry_column: 'geometry' }, 'countries-10m');
    expect(covering[0]).toBeCloseTo(166.52, 1);
    expect(covering[2]).toBeCloseTo(-171.44, 1);
    covering.forEach((value, index) => expect(value).toBeCloseTo(decoded[index]!, 6));
  });

  it('keep the whole world for every country, Antarctica included', async () => {
    const bounds = await boundsOf('SELECT * FROM countries');
    expect(bounds[0]).toBe(-180);
    expect(bounds[2]).toBe(180);
    expect(bounds[1]).toBe(-90);
    expect(bounds[3]).toBeCloseTo(83.6, 1);
  });
});

describe('query bounds from a bbox covering that does not match its geometry', () => {
  const SOUTHERN_AFRICA = "name IN ('South Africa', 'Namibia', 'Botswana', 'Zimbabwe', 'Mozambique', 'Lesotho')";
  /** The southern African countries, South Africa's bbox replaced by one made of these four expressions. */
  const withBbox = (xmin: string, ymin: string, xmax: string, ymax: string) => `SELECT name, geometry, CASE WHEN name = 'South Africa'
    THEN struct_pack(xmin := CAST(${xmin} AS DOUBLE), ymin := CAST(${ymin} AS DOUBLE), xmax := CAST(${xmax} AS DOUBLE), ymax := CAST(${ymax} AS DOUBLE))
    ELSE bbox END AS bbox FROM countries WHERE ${SOUTHERN_AFRICA}`;

  it.each([
    ['a NaN south edge', withBbox('bbox.xmin', "'nan'", 'bbox.xmax', 'bbox.ymax')],
    ['a west edge a fraction of a degree east of the east edge (crossing ±180°)', withBbox('bbox.xmin + 0.3', 'bbox.ymin', 'bbox.xmin + 0.1', 'bbox.ymax')],
    ['a box from -180° to 180°, as a geometry cut at ±180° has', withBbox('-180', 'bbox.ymin', '180', 'bbox.ymax')],
    ['a south edge past the pole', withBbox('bbox.xmin', '-95', 'bbox.xmax', 'bbox.ymax')],
    ['an infinite west edge', withBbox("'-inf'", 'bbox.ymin', 'bbox.xmax', 'bbox.ymax')],
    ['a null west edge', withBbox('NULL', 'bbox.ymin', 'bbox.xmax', 'bbox.ymax')],
  ])('decode the rows whose bbox has %s, and answer as decoding every row does', async (_case, sql) => {
    const decoded = await boundsOf(`SELECT name, geometry FROM countries WHERE ${SOUTHERN_AFRICA}`, { geometry_column: 'geometry' });
    // South Africa's own edges: west of Namibia's south, and the southernmost of the six.
    expect(decoded[1]).toBeCloseTo(-34.8, 1);
    const covering = await boundsOf(sql);
    covering.forEach((value, index) => expect(value).toBeCloseTo(decoded[index]!, 9));
  });
});

describe('file bounds across the antimeridian', () => {
  it('give Fiji\'s decoded geometry an extent that crosses ±180°, where its plain extent is the world', async () => {
    const [fiji] = await readWkb(`SELECT st_asbinary(geometry) FROM read_parquet('${COUNTRIES}') WHERE name = 'Fiji'`);
    const extent = createExtent();
    inspectWkb(fiji!, extent);
    finishLonLatExtent(extent)!.forEach((value, index) => expect(value).toBeCloseTo(FIJI[index]!, 1));
  });

  it('give a file holding Fiji alone west > east', async () => {
    const path = join(await makeTempDir(), 'fiji.parquet');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const geo = JSON.stringify({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: ['MultiPolygon'] } } });
    await connection.run(`COPY (SELECT name, st_asbinary(geometry) AS geometry FROM read_parquet('${COUNTRIES}') WHERE name = 'Fiji') TO '${path}' (FORMAT parquet, KV_METADATA {geo: '${geo}'})`);
    connection.closeSync();
    const facts = await inspectGeoParquet(instance, path);
    instance.closeSync();
    facts.geometry!.bounds!.forEach((value, index) => expect(value).toBeCloseTo(FIJI[index]!, 1));
  });

  it('keep the countries file at the whole world', async () => {
    const file = await readSampleJson<any>('api/collections/natural-earth/datasets/countries/files/countries-110m/index.json');
    expect(file.file.file_metadata.bounds.slice(0, 3)).toEqual([-180, -90, 180]);
  });

  it('give the United States, from Guam east across ±180° to the Virgin Islands, west > east', async () => {
    const file = await readSampleJson<any>('api/collections/us-census/datasets/us-boundaries/files/nation/index.json');
    const [west, south, east, north] = file.file.file_metadata.bounds;
    expect([west, south, east, north].map((value: number) => Math.round(value))).toEqual([145, -14, -65, 71]);
    expect(file.file.file_metadata.quality_check_passed).toBe(true);
  });
});
