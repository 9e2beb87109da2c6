import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { afterAll, describe, expect, it } from 'vitest';
import { QueryBoundsSchema, QueryErrorSchema, QueryResultSchema } from '../schemas/query.ts';
import { getWithToken, post, queryServer, sourceRef } from './helpers/queries.ts';
import { readSampleJson } from './helpers/sample.ts';

const server = queryServer();
afterAll(() => server.close());

async function run(sql: string, sources: ReturnType<typeof sourceRef>[], extra: Record<string, unknown> = {}) {
  const response = await post(server, '/api/queries', { sources, sql, limit: 5, ...extra });
  expect(response.status, await response.clone().text()).toBe(200);
  return QueryResultSchema.parse(await response.json());
}

const megacities = () => sourceRef(server, 'places', 'geonames', 'megacities', 'megacities');
const counties = () => sourceRef(server, 'counties', 'us-census', 'us-boundaries', 'counties');

describe('bounds', () => {
  it('are the WGS84 extent of the whole result, not of the first page', async () => {
    const expected = (await readSampleJson<any>('api/collections/geonames/datasets/megacities/files/megacities/index.json')).file.file_metadata.bounds;
    const result = await run('SELECT * FROM places ORDER BY name', [megacities()]);
    expect(result.has_more).toBe(true);
    const bounds = QueryBoundsSchema.parse(await (await getWithToken(server, `/api/queries/${result.query_id}/bounds`, result.query_token)).json()).bounds;
    bounds.forEach((value, index) => expect(value).toBeCloseTo(expected[index], 9));
  });

  it('come out the same from the bbox covering and from decoding the geometries', async () => {
    const covered = await run("SELECT * FROM counties WHERE state_name = 'Colorado'", [counties()]);
    const decoded = await run("SELECT geometry FROM counties WHERE state_name = 'Colorado'", [counties()]);
    const bounds = async (result: typeof covered) => QueryBoundsSchema.parse(await (await getWithToken(server, `/api/queries/${result.query_id}/bounds`, result.query_token)).json()).bounds;
    const [a, b] = [await bounds(covered), await bounds(decoded)];
    a.forEach((value, index) => expect(value).toBeCloseTo(b[index]!, 6));
    expect(a[0]).toBeCloseTo(-109.06, 1);
    expect(a[3]).toBeCloseTo(41.0, 1);
  });

  it('answer 422 for a result without geometry', async () => {
    const result = await run('SELECT name FROM places', [megacities()]);
    const response = await getWithToken(server, `/api/queries/${result.query_id}/bounds`, result.query_token);
    expect(response.status).toBe(422);
    expect(QueryErrorSchema.parse(await response.json()).code).toBe('no_geometry');
  });
});

describe('tiles', () => {
  it('decode as Mapbox vector tiles holding the features of the result', async () => {
    const result = await run('SELECT name, country, population, geometry FROM places', [megacities()]);
    const response = await getWithToken(server, `/api/queries/${result.query_id}/tiles/0/0/0.mvt`, result.query_token);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.mapbox-vector-tile');
    const tile = new VectorTile(new PbfReader(new Uint8Array(await response.arrayBuffer())));
    const layer = tile.layers.result!;
    expect(layer.length).toBe(363);
    const names = Array.from({ length: layer.length }, (_, index) => layer.feature(index).properties);
    const tokyo = names.find((properties) => properties.name === 'Tokyo')!;
    expect(tokyo).toMatchObject({ country: 'JP', population: 8336599 });
  });

  it('clip polygons to the tile and accept the token as a query parameter', async () => {
    const result = await run("SELECT name, geometry FROM counties WHERE state_name = 'Colorado'", [counties()]);
    const response = await server.fetch(new Request(`http://localhost/api/queries/${result.query_id}/tiles/6/13/24.mvt?token=${encodeURIComponent(result.query_token)}`));
    expect(response.status).toBe(200);
    const layer = new VectorTile(new PbfReader(new Uint8Array(await response.arrayBuffer()))).layers.result!;
    expect(layer.length).toBeGreaterThan(10);
    const feature = layer.feature(0).toGeoJSON(13, 24, 6);
    expect(feature.geometry.type).toMatch(/Polygon/);
  });

  it('answer 204 outside the result, 400 for an impossible or non-canonical address, and 404 for a path that is no tile', async () => {
    const result = await run('SELECT * FROM places', [megacities()]);
    expect((await getWithToken(server, `/api/queries/${result.query_id}/tiles/8/0/0.mvt`, result.query_token)).status).toBe(204);
    const statuses = async (addresses: string[], method = 'GET') => Promise.all(addresses.map(async (address) => {
      const response = await server.fetch(new Request(`http://localhost/api/queries/${result.query_id}/tiles/${address}`, { method, headers: { 'x-service-query-token': result.query_token } }));
      return [address, response.status, response.status === 204 ? null : (await response.json() as { code: string }).code];
    }));
    expect(await statuses(['1/2/0.mvt', '25/0/0.mvt', '3/-1/1.mvt', '0x1/0/0.mvt', '1e0/0/0.mvt', '+1/0/0.mvt', '1/01/0.mvt', '1/0/ 0.mvt']))
      .toEqual(['1/2/0.mvt', '25/0/0.mvt', '3/-1/1.mvt', '0x1/0/0.mvt', '1e0/0/0.mvt', '+1/0/0.mvt', '1/01/0.mvt', '1/0/ 0.mvt'].map((address) => [address, 400, 'invalid_tile']));
    expect(await statuses(['3/1/1.png', '3/1', '3/1/1/1.mvt', '3'])).toEqual(['3/1/1.png', '3/1', '3/1/1/1.mvt', '3'].map((address) => [address, 404, 'not_found']));
    expect(await statuses(['3/1/1.png', '3/1'], 'POST')).toEqual([['3/1/1.png', 404, 'not_found'], ['3/1', 404, 'not_found']]);
  });

  it('answer HEAD like GET without a body, on tiles and bounds', async () => {
    const result = await run('SELECT * FROM places', [megacities()]);
    for (const path of ['tiles/0/0/0.mvt', 'bounds']) {
      const url = `http://localhost/api/queries/${result.query_id}/${path}`;
      const headers = { 'x-service-query-token': result.query_token };
      const get = await server.fetch(new Request(url, { headers }));
      const head = await server.fetch(new Request(url, { method: 'HEAD', headers }));
      expect(head.status, path).toBe(200);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(head.headers.get('content-length')).toBe(String((await get.arrayBuffer()).byteLength));
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    }
  });

  it('give tiles an ETag a CDN can keep, and answer 304 when it matches', async () => {
    const result = await run('SELECT * FROM places', [megacities()]);
    const url = `http://localhost/api/queries/${result.query_id}/tiles/0/0/0.mvt`;
    const first = await server.fetch(new Request(url, { headers: { 'x-service-query-token': result.query_token } }));
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]{20,}"$/);
    expect(first.headers.get('cache-control')).toMatch(/^public, max-age=\d+/);
    const again = await server.fetch(new Request(url, { headers: { 'x-service-query-token': result.query_token, 'if-none-match': etag! } }));
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
  });

  it('cap the features of a tile and say so', async () => {
    const capped = queryServer({ tileMaxFeatures: 50 });
    const response = await post(capped, '/api/queries', { sources: [sourceRef(capped, 'places', 'geonames', 'megacities', 'megacities')], sql: 'SELECT * FROM places' });
    const result = QueryResultSchema.parse(await response.json());
    const tile = await getWithToken(capped, `/api/queries/${result.query_id}/tiles/0/0/0.mvt`, result.query_token);
    expect(tile.headers.get('x-geoshelf-tile-truncated')).toBe('true');
    expect(new VectorTile(new PbfReader(new Uint8Array(await tile.arrayBuffer()))).layers.result!.length).toBe(50);
    await capped.close();
  });
});
