import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { PMTiles } from 'pmtiles';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tileRange } from '../core/api/ogc/tiles.ts';
import { PmTilesFileSource } from '../runtime/pmtiles-file-source.ts';
import type { GeoshelfServer } from '../server/app.ts';
import { makeTempDir } from './helpers/catalog.ts';
import { get, sampleConfig, sampleServer } from './helpers/sample.ts';
import { getWithToken, post, queryServer, sourceRef } from './helpers/queries.ts';

const HAS_OGRINFO = spawnSync('ogrinfo', ['--version'], { encoding: 'utf8' }).status === 0;
if (!HAS_OGRINFO) console.log('SKIPPED: ogrinfo is not on PATH (apt-get install -y gdal-bin), so GDAL does not read the OGC API tiles here.');

const MEGACITIES = 'geonames.megacities.megacities';
const TILESET = `/features/collections/${MEGACITIES}/tiles/WebMercatorQuad`;

let server: GeoshelfServer;
let archive: PMTiles;
let header: Awaited<ReturnType<PMTiles['getHeader']>>;

beforeAll(async () => {
  server = sampleServer();
  archive = new PMTiles(new PmTilesFileSource(join(sampleConfig().dataDir, 'geonames/megacities/3.1.0/megacities.pmtiles')));
  header = await archive.getHeader();
});
afterAll(() => server?.close());

async function getJson(path: string): Promise<{ status: number; body: any }> {
  const response = await get(server, path);
  return { status: response.status, body: await response.json() };
}

/** The tile of WebMercatorQuad that holds a place, at a zoom level. */
function tileOf(lon: number, lat: number, z: number): { row: number; col: number } {
  const range = tileRange([lon, lat, lon, lat], z);
  return { row: range.minTileRow, col: range.minTileCol };
}

describe('OGC API - Tiles over the PMTiles twins', () => {
  it('declares the Tiles classes and links the tile matrix sets from the landing page', async () => {
    const conformance = await getJson('/features/conformance');
    expect(conformance.body.conformsTo).toEqual(expect.arrayContaining(['http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/core', 'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt']));
    const landing = await getJson('/features');
    const schemes = landing.body.links.find((link: { rel: string }) => link.rel === 'http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes');
    expect(new URL(schemes.href).pathname).toBe('/features/tileMatrixSets');
  });

  it('defines WebMercatorQuad as OGC TMS 2.0 does: 25 levels, one 256-pixel tile at level 0', async () => {
    const list = await getJson('/features/tileMatrixSets');
    expect(list.body.tileMatrixSets.map((set: { id: string }) => set.id)).toEqual(['WebMercatorQuad']);
    const { body } = await getJson('/features/tileMatrixSets/WebMercatorQuad');
    expect(body.crs).toBe('http://www.opengis.net/def/crs/EPSG/0/3857');
    expect(body.tileMatrices).toHaveLength(25);
    expect(body.tileMatrices[0]).toMatchObject({ id: '0', matrixWidth: 1, matrixHeight: 1, tileWidth: 256, cornerOfOrigin: 'topLeft' });
    expect(body.tileMatrices[0].scaleDenominator).toBeCloseTo(559_082_264.028_717_8, 3);
    expect(body.tileMatrices[3]).toMatchObject({ matrixWidth: 8, matrixHeight: 8 });
    expect((await get(server, '/features/tileMatrixSets/WorldCRS84Quad')).status).toBe(404);
  });

  it('links each collection with a twin to its tilesets, and the tileset to its tiles', async () => {
    const collection = await getJson(`/features/collections/${MEGACITIES}`);
    const tilesets = collection.body.links.find((link: { rel: string }) => link.rel === 'http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector');
    const list = await getJson(new URL(tilesets.href).pathname);
    expect(list.body.tilesets).toHaveLength(1);
    expect(list.body.tilesets[0]).toMatchObject({ dataType: 'vector', tileMatrixSetURI: 'http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad' });
    const { body } = await getJson(TILESET);
    const levels = body.tileMatrixSetLimits.map((limit: { tileMatrix: string }) => Number(limit.tileMatrix));
    expect(levels[0]).toBe(header.minZoom);
    expect(levels.at(-1)).toBe(header.maxZoom);
    const item = body.links.find((link: { rel: string }) => link.rel === 'item');
    expect(item).toMatchObject({ type: 'application/vnd.mapbox-vector-tile', templated: true });
    expect(item.href).toMatch(/\/tiles\/WebMercatorQuad\/\{tileMatrix\}\/\{tileRow\}\/\{tileCol\}$/);
  });

  it('serves the tile that holds Tokyo with the bytes of the archive, a vector tile with the cities in it', async () => {
    const z = Math.min(header.maxZoom, 5);
    const { row, col } = tileOf(139.69, 35.69, z);
    const response = await get(server, `${TILESET}/${z}/${row}/${col}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.mapbox-vector-tile');
    const bytes = new Uint8Array(await response.arrayBuffer());
    const direct = await archive.getZxy(z, col, row);
    expect(bytes).toEqual(new Uint8Array(direct!.data));
    const tile = new VectorTile(new PbfReader(bytes));
    const layer = tile.layers[Object.keys(tile.layers)[0]!]!;
    const names = Array.from({ length: layer.length }, (_, index) => layer.feature(index).properties.name);
    expect(names).toContain('Tokyo');
  });

  it.skipIf(!HAS_OGRINFO)('serves tiles GDAL\'s MVT driver reads: the Tokyo tile with every feature the archive has there', async () => {
    const z = Math.min(header.maxZoom, 5);
    const { row, col } = tileOf(139.69, 35.69, z);
    const folder = await makeTempDir('geoshelf-ogc-tiles-');
    await mkdir(join(folder, String(z), String(col)), { recursive: true });
    const path = join(folder, String(z), String(col), `${row}.pbf`);
    await writeFile(path, new Uint8Array(await (await get(server, `${TILESET}/${z}/${row}/${col}`)).arrayBuffer()));
    const { stdout, stderr } = spawnSync('ogrinfo', ['-ro', '-al', '-so', path], { encoding: 'utf8' });
    await rm(folder, { recursive: true, force: true });
    expect(stderr).not.toMatch(/ERROR/);
    const tile = new VectorTile(new PbfReader(new Uint8Array((await archive.getZxy(z, col, row))!.data)));
    const layer = Object.keys(tile.layers)[0]!;
    expect(stdout).toContain(`Layer name: ${layer}`);
    expect(stdout).toContain(`Feature Count: ${tile.layers[layer]!.length}`);
  });

  it('answers 204 for an empty tile inside the limits, and 404 outside them', async () => {
    const z = header.maxZoom;
    const range = tileRange([header.minLon, header.minLat, header.maxLon, header.maxLat], z);
    let empty: { row: number; col: number } | undefined;
    for (let row = range.minTileRow; row <= range.maxTileRow && !empty; row++) {
      for (let col = range.minTileCol; col <= range.maxTileCol && !empty; col++) if (!(await archive.getZxy(z, col, row))) empty = { row, col };
    }
    expect(empty, 'an empty tile inside the limits').toBeDefined();
    expect((await get(server, `${TILESET}/${z}/${empty!.row}/${empty!.col}`)).status).toBe(204);
    const west = await getJson(`${TILESET}/${z}/${range.minTileRow}/${range.minTileCol - 1}`);
    expect(west.status).toBe(404);
    const deeper = await getJson(`${TILESET}/${header.maxZoom + 1}/0/0`);
    expect(deeper.status).toBe(404);
    expect(deeper.body.description).toContain(`zoom levels ${header.minZoom}–${header.maxZoom}`);
    const bad = await getJson(`${TILESET}/x/0/0`);
    expect(bad.status).toBe(404);
    expect(bad.body.description).toMatch(/^No such tile: /);
  });

  it('gives the tileset as TileJSON 3.0, whose template serves the same tiles', async () => {
    const { body } = await getJson(`${TILESET}?f=tilejson`);
    expect(body).toMatchObject({ tilejson: '3.0.0', minzoom: header.minZoom, maxzoom: header.maxZoom, scheme: 'xyz' });
    expect(body.vector_layers.length).toBeGreaterThan(0);
    const url = new URL(body.tiles[0].replace('{z}', '0').replace('{x}', '0').replace('{y}', '0'));
    const viaTemplate = await get(server, url.pathname);
    expect(viaTemplate.status).toBe(header.minZoom === 0 ? 200 : 404);
  });
});

describe('a query result\'s tiles as a tileset', () => {
  let queries: GeoshelfServer;
  beforeAll(() => {
    queries = queryServer();
  });
  afterAll(() => queries?.close());

  it('gives an OGC tileset and a TileJSON whose templates, with the token, serve the result\'s tiles', async () => {
    const created = await post(queries, '/api/queries', { sources: [sourceRef(queries, 'cities', 'geonames', 'megacities', 'megacities')], sql: 'SELECT name, geometry FROM cities WHERE population > 5000000' });
    const { query_id: id, query_token: token } = await created.json() as { query_id: string; query_token: string };
    const tileJson = await (await getWithToken(queries, `/api/queries/${id}/tileset?f=tilejson`, token)).json() as { tiles: string[]; bounds: number[]; vector_layers: { id: string }[] };
    expect(tileJson.vector_layers.map((layer) => layer.id)).toEqual(['result']);
    expect(tileJson.bounds[0]).toBeLessThan(tileJson.bounds[2]!);
    const { row, col } = tileOf(139.69, 35.69, 4);
    const tileUrl = new URL(tileJson.tiles[0]!.replace('{z}', '4').replace('{x}', String(col)).replace('{y}', String(row)));
    const tile = await get(queries, tileUrl.pathname + tileUrl.search);
    expect(tile.status).toBe(200);
    const layer = new VectorTile(new PbfReader(new Uint8Array(await tile.arrayBuffer()))).layers.result!;
    expect(Array.from({ length: layer.length }, (_, index) => layer.feature(index).properties.name)).toContain('Tokyo');
    const tileset = await (await get(queries, `/api/queries/${id}/tileset?token=${encodeURIComponent(token)}`)).json() as { links: { rel: string; href: string; templated?: boolean }[]; tileMatrixSetLimits: { tileMatrix: string; minTileRow: number; maxTileRow: number; minTileCol: number; maxTileCol: number }[] };
    const atFour = tileset.tileMatrixSetLimits.find((limit) => limit.tileMatrix === '4')!;
    expect(row).toBeGreaterThanOrEqual(atFour.minTileRow);
    expect(row).toBeLessThanOrEqual(atFour.maxTileRow);
    expect(col).toBeGreaterThanOrEqual(atFour.minTileCol);
    expect(col).toBeLessThanOrEqual(atFour.maxTileCol);
    const item = tileset.links.find((link) => link.rel === 'item')!;
    expect(item.templated).toBe(true);
    const ogcUrl = new URL(item.href.replace('{tileMatrix}', '4').replace('{tileRow}', String(row)).replace('{tileCol}', String(col)));
    expect(new Uint8Array(await (await get(queries, ogcUrl.pathname + ogcUrl.search)).arrayBuffer())).toEqual(new Uint8Array(await (await get(queries, tileUrl.pathname + tileUrl.search)).arrayBuffer()));
    const untokened = await get(queries, `/api/queries/${id}/tileset`);
    expect(untokened.status).toBe(400);
    expect(((await untokened.json()) as { code: string }).code).toBe('token_missing');
  });
});
