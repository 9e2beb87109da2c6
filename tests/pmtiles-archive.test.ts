import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { PMTiles, tileIdToZxy as theirTileIdToZxy, zxyToTileId as theirZxyToTileId } from 'pmtiles';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeTile, type TileFeature } from '../core/geo/mvt.ts';
import { PmTilesFormatError, readPmTilesHeader } from '../runtime/pmtiles-header.ts';
import { readPmTilesInfo } from '../runtime/pmtiles-info.ts';
import { tileIdToZxy, zxyToTileId } from '../runtime/pmtiles-tile-id.ts';
import { writePmTiles, type PmTilesTile } from '../runtime/pmtiles.ts';
import { encodeWkb } from '../core/geo/wkb.ts';
import { PmTilesFileSource } from '../runtime/pmtiles-file-source.ts';
import { tileOf } from './helpers/pmtiles.ts';

const dir = mkdtempSync(join(tmpdir(), 'geoshelf-pmtiles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CITIES: [string, number, number][] = [['Paris', 2.35, 48.86], ['Tokyo', 139.69, 35.69], ['Lagos', 3.38, 6.52], ['Lima', -77.04, -12.05], ['Sydney', 151.21, -33.87]];

/** Tiles z0–z5 holding the cities that fall in them, made by the project's MVT encoder. */
function cityTiles(): PmTilesTile[] {
  const tiles = new Map<string, PmTilesTile & { features: TileFeature[] }>();
  for (let z = 0; z <= 5; z++) {
    for (const [name, lon, lat] of CITIES) {
      const [x, y] = tileOf(lon, lat, z);
      const key = `${z}/${x}/${y}`;
      const tile = tiles.get(key) ?? { z, x, y, bytes: new Uint8Array(), features: [] };
      tile.features.push({ wkb: encodeWkb({ type: 'Point', coordinates: [lon, lat] }), properties: { name } });
      tiles.set(key, tile);
    }
  }
  return [...tiles.values()].map(({ z, x, y, features }) => ({ z, x, y, bytes: encodeTile(features, z, x, y, { layerName: 'cities', maxFeatures: 100 }).bytes }));
}

const OPTIONS = { minZoom: 0, maxZoom: 5, bounds: [-77.04, -33.87, 151.21, 48.86] as [number, number, number, number], center: [2.35, 48.86, 3] as [number, number, number], metadata: { vector_layers: [{ id: 'cities', fields: { name: 'String' }, minzoom: 0, maxzoom: 5 }], name: 'Cities' } };

describe('PMTiles tile ids', () => {
  it('agree with the pmtiles package both ways, zoom 0 to 20', () => {
    for (let z = 0; z <= 20; z++) {
      const n = 2 ** z;
      for (const [x, y] of [[0, 0], [n - 1, 0], [0, n - 1], [n - 1, n - 1], [Math.floor(n / 3), Math.floor((2 * n) / 3)]] as const) {
        const id = zxyToTileId(z, x, y);
        expect(id).toBe(theirZxyToTileId(z, x, y));
        expect(tileIdToZxy(id)).toEqual([z, x, y]);
        expect(theirTileIdToZxy(id)).toEqual([z, x, y]);
      }
    }
  });

  it('number zoom 0 as 0 and zoom 1 as 1 to 4 along the Hilbert curve', () => {
    expect(zxyToTileId(0, 0, 0)).toBe(0);
    expect([[0, 0], [0, 1], [1, 1], [1, 0]].map(([x, y]) => zxyToTileId(1, x!, y!))).toEqual([1, 2, 3, 4]);
    expect(() => zxyToTileId(2, 4, 0)).toThrow(RangeError);
  });
});

describe('PMTiles archives written by geoshelf', () => {
  it('are read by the pmtiles package: header, metadata and the features of each tile', async () => {
    const path = join(dir, 'cities.pmtiles');
    const tiles = cityTiles();
    const result = await writePmTiles(path, tiles, OPTIONS);
    expect(result.addressedTiles).toBe(tiles.length);
    const archive = new PMTiles(new PmTilesFileSource(path));
    const header = await archive.getHeader();
    expect(header).toMatchObject({ specVersion: 3, minZoom: 0, maxZoom: 5, numAddressedTiles: tiles.length, tileType: 1 });
    expect(header.minLon).toBeCloseTo(-77.04, 5);
    expect(header.maxLat).toBeCloseTo(48.86, 5);
    expect(await archive.getMetadata()).toEqual(OPTIONS.metadata);
    const [x, y] = tileOf(139.69, 35.69, 4);
    const tokyo = await archive.getZxy(4, x, y);
    const layer = new VectorTile(new PbfReader(new Uint8Array(tokyo!.data))).layers.cities!;
    expect(Array.from({ length: layer.length }, (_, index) => layer.feature(index).properties.name)).toEqual(['Tokyo']);
    const world = new VectorTile(new PbfReader(new Uint8Array((await archive.getZxy(0, 0, 0))!.data))).layers.cities!;
    expect(world.length).toBe(CITIES.length);
    expect(await archive.getZxy(4, 0, 15)).toBeUndefined();
  });

  it('store identical tiles once, in runs, and go through leaf directories when the root would pass 16 KiB', async () => {
    const path = join(dir, 'many.pmtiles');
    const empty = encodeTile([], 8, 0, 0, { layerName: 'cities', maxFeatures: 1 }).bytes;
    // A tile of its own: the empty tile plus field 15 (which readers skip) holding its index, as a varint.
    const own = (index: number) => {
      const varint: number[] = [];
      for (let rest = index; ; rest >>>= 7) {
        if (rest < 0x80) {
          varint.push(rest);
          break;
        }
        varint.push((rest & 0x7f) | 0x80);
      }
      return new Uint8Array([...empty, 0x78, ...varint]);
    };
    // Every tile of zoom 8 (65,536), in tile-id order: the first 20,000 the same (one run), then one in three its own.
    const first = zxyToTileId(8, 0, 0);
    const bytesOf = (index: number) => (index >= 20_000 && index % 3 === 0 ? own(index) : empty);
    const tiles = function* () {
      for (let index = 0; index < 4 ** 8; index++) {
        const [z, x, y] = tileIdToZxy(first + index);
        yield { z, x, y, bytes: bytesOf(index) };
      }
    };
    const result = await writePmTiles(path, tiles(), { ...OPTIONS, minZoom: 8, maxZoom: 8 });
    expect(result.addressedTiles).toBe(65_536);
    expect(result.tileContents).toBe(1 + Math.ceil((65_536 - 20_001) / 3));
    expect(result.tileEntries).toBeLessThan(result.addressedTiles - 19_000);
    const { header } = await readPmTilesInfo(path);
    expect(header.leafDirectoryLength).toBeGreaterThan(0);
    expect(header.clustered).toBe(true);
    const archive = new PMTiles(new PmTilesFileSource(path));
    for (const index of [0, 12_345, 19_999, 20_001, 20_002, 40_000, 65_535]) {
      const [z, x, y] = tileIdToZxy(first + index);
      expect(new Uint8Array((await archive.getZxy(z, x, y))!.data), `tile ${index}`).toEqual(bytesOf(index));
    }
  });

  it('come out byte for byte the same from the same tiles, in whatever order they are given', async () => {
    const tiles = cityTiles();
    await writePmTiles(join(dir, 'a.pmtiles'), tiles, OPTIONS);
    await writePmTiles(join(dir, 'b.pmtiles'), tiles, OPTIONS);
    expect(readFileSync(join(dir, 'a.pmtiles')).equals(readFileSync(join(dir, 'b.pmtiles')))).toBe(true);
    await writePmTiles(join(dir, 'c.pmtiles'), [...tiles].reverse(), OPTIONS);
    const reversed = new PMTiles(new PmTilesFileSource(join(dir, 'c.pmtiles')));
    expect((await reversed.getHeader()).clustered).toBe(false);
    expect((await reversed.getZxy(0, 0, 0))).toBeDefined();
  });

  it('refuse a tile given twice', async () => {
    const tiles = cityTiles();
    await expect(writePmTiles(join(dir, 'twice.pmtiles'), [...tiles, tiles[0]!], OPTIONS)).rejects.toThrow(/given twice/);
  });
});

describe('PMTiles headers that cannot be read', () => {
  const good = () => {
    const path = join(dir, 'good.pmtiles');
    return writePmTiles(path, cityTiles(), OPTIONS).then(() => readFileSync(path));
  };
  const reasonOf = (bytes: Uint8Array, size = bytes.length) => {
    try {
      readPmTilesHeader(bytes, size);
    } catch (error) {
      expect(error).toBeInstanceOf(PmTilesFormatError);
      return (error as PmTilesFormatError).reason;
    }
    return 'read';
  };

  it('are told apart, each with its own reason', async () => {
    const bytes = await good();
    expect(reasonOf(bytes)).toBe('read');
    const changed = (edit: (copy: Buffer) => void) => {
      const copy = Buffer.from(bytes);
      edit(copy);
      return copy;
    };
    const reasons = [
      reasonOf(changed((copy) => copy.write('PMTilez', 0, 'ascii'))),
      reasonOf(changed((copy) => copy.writeUInt8(2, 7))),
      reasonOf(bytes.subarray(0, 100)),
      reasonOf(changed((copy) => copy.writeBigUInt64LE(BigInt(bytes.length + 10), 8))),
      reasonOf(changed((copy) => copy.writeUInt8(9, 100))),
    ];
    expect(reasons[0]).toMatch(/does not start with "PMTiles"/);
    expect(reasons[1]).toMatch(/version 2/);
    expect(reasons[2]).toMatch(/fewer than the 127 of a header/);
    expect(reasons[3]).toMatch(/root directory ends at byte .* past the end/);
    expect(reasons[4]).toMatch(/zooms run from 9 to 5/);
    expect(new Set(reasons).size).toBe(reasons.length);
  });

  it('and a file cut short is caught when its metadata is read', async () => {
    const bytes = await good();
    const path = join(dir, 'cut.pmtiles');
    writeFileSync(path, bytes.subarray(0, 300));
    await expect(readPmTilesInfo(path)).rejects.toThrow(PmTilesFormatError);
  });
});
