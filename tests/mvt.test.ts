import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { VectorTile, classifyRings } from '@mapbox/vector-tile';
import type { VectorTileFeature, VectorTileLayer } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { describe, expect, test } from 'vitest';
import { MERCATOR_MAX_LATITUDE, encodeTile, isValidTile, tileBounds, tileWrapBounds } from '../core/geo/mvt.ts';
import type { TileFeature, TileOptions } from '../core/geo/mvt.ts';
import { decodeWkb, encodeWkb } from '../core/geo/wkb.ts';
import type { Geometry, Position } from '../core/geo/wkb.ts';
import { ROOT } from './helpers/catalog.ts';

const EXTENT = 4096;
const options: TileOptions = { layerName: 'result', maxFeatures: 1000 };

const feature = (geometry: Geometry, properties: TileFeature['properties'] = {}): TileFeature => ({ wkb: encodeWkb(geometry), properties });

const worldPixel = (lon: number, lat: number, z: number): [number, number] => {
  const size = 2 ** z;
  const phi = (lat * Math.PI) / 180;
  return [((lon + 180) / 360) * size, ((1 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / Math.PI) / 2) * size];
};

const tileOf = (lon: number, lat: number, z: number): [number, number] => {
  const [wx, wy] = worldPixel(lon, lat, z);
  return [Math.floor(wx), Math.floor(wy)];
};

const tilePixel = (lon: number, lat: number, z: number, x: number, y: number): [number, number] => {
  const [wx, wy] = worldPixel(lon, lat, z);
  return [Math.round((wx - x) * EXTENT), Math.round((wy - y) * EXTENT)];
};

const layerOf = (bytes: Uint8Array): VectorTileLayer => {
  const layer = new VectorTile(new PbfReader(bytes)).layers.result;
  if (layer === undefined) throw new Error('tile has no result layer');
  return layer;
};

const featuresOf = (bytes: Uint8Array): VectorTileFeature[] => {
  const layer = layerOf(bytes);
  return Array.from({ length: layer.length }, (_, i) => layer.feature(i));
};

const ringAreaOf = (ring: { x: number; y: number }[]): number => {
  let sum = 0;
  for (let i = 0; i + 1 < ring.length; i++) {
    const a = ring[i]!;
    const b = ring[i + 1]!;
    sum += a.x * b.y - b.x * a.y;
  }
  return sum / 2;
};

const square = (west: number, south: number, east: number, north: number): Position[] => [
  [west, south],
  [east, south],
  [east, north],
  [west, north],
  [west, south],
];

const berlin = { lon: 13.4, lat: 52.52, z: 10 };
const [berlinX, berlinY] = tileOf(berlin.lon, berlin.lat, berlin.z);
const [bWest, bSouth, bEast, bNorth] = tileBounds(berlin.z, berlinX, berlinY);
const bWidth = bEast - bWest;
const bHeight = bNorth - bSouth;

describe.each([
  ['Berlin at z=10', 13.4, 52.52, 10],
  ['Sydney at z=8', 151.2093, -33.8688, 8],
  ['Null Island at z=1', 0.001, -0.001, 1],
  ['Quito at z=16', -78.4678, -0.1807, 16],
  ['Reykjavik at z=22', -21.9426, 64.1466, 22],
])('a point in %s', (_name, lon, lat, z) => {
  const [x, y] = tileOf(lon, lat, z);
  test('lands on the tile pixel of the spherical Mercator formula', () => {
    const tile = encodeTile([feature({ type: 'Point', coordinates: [lon, lat] })], z, x, y, options);
    expect(tile.features).toBe(1);
    const [decoded] = featuresOf(tile.bytes);
    const point = decoded!.loadGeometry()[0]![0]!;
    expect([point.x, point.y]).toEqual(tilePixel(lon, lat, z, x, y));
    expect(decoded!.type).toBe(1);
  });
});

test('a point north of the Mercator limit is clamped to the top edge of the world', () => {
  const tile = encodeTile([feature({ type: 'Point', coordinates: [10, 89.5] })], 0, 0, 0, options);
  const point = featuresOf(tile.bytes)[0]!.loadGeometry()[0]![0]!;
  expect([point.x, point.y]).toEqual([Math.round(((10 + 180) / 360) * EXTENT), 0]);
});

describe('polygons', () => {
  const exterior = square(bWest + bWidth * 0.2, bSouth + bHeight * 0.2, bWest + bWidth * 0.8, bSouth + bHeight * 0.8);
  const hole = square(bWest + bWidth * 0.4, bSouth + bHeight * 0.4, bWest + bWidth * 0.6, bSouth + bHeight * 0.6);
  const encodeOne = (geometry: Geometry) => encodeTile([feature(geometry)], berlin.z, berlinX, berlinY, options);

  test('a polygon inside the tile decodes back to about the input', () => {
    const tile = encodeOne({ type: 'Polygon', coordinates: [exterior, hole] });
    const geojson = featuresOf(tile.bytes)[0]!.toGeoJSON(berlinX, berlinY, berlin.z);
    expect(geojson.geometry.type).toBe('Polygon');
    const rings = (geojson.geometry as { coordinates: Position[][] }).coordinates;
    expect(rings).toHaveLength(2);
    const tolerance = bWidth / EXTENT;
    const near = (a: Position[], b: Position[]) => a.every((p) => b.some((q) => Math.hypot(p[0]! - q[0]!, p[1]! - q[1]!) < tolerance));
    for (const [decodedRing, inputRing] of [[rings[0]!, exterior], [rings[1]!, hole]] as const) {
      expect(decodedRing).toHaveLength(5);
      expect(near(decodedRing, inputRing) && near(inputRing, decodedRing)).toBe(true);
    }
  });

  describe.each([
    ['as given', (ring: Position[]) => ring],
    ['with reversed rings', (ring: Position[]) => [...ring].reverse()],
  ])('winding of rings %s', (_name, orient) => {
    test('follows the spec: exterior area positive, interior negative', () => {
      const tile = encodeOne({ type: 'Polygon', coordinates: [orient(exterior), orient(hole)] });
      const rings = featuresOf(tile.bytes)[0]!.loadGeometry();
      expect(rings.map((ring) => Math.sign(ringAreaOf(ring)))).toEqual([1, -1]);
      const polygons = classifyRings(rings);
      expect(polygons).toHaveLength(1);
      expect(polygons[0]).toHaveLength(2);
    });
  });

  test('a multipolygon becomes one feature with one exterior per part', () => {
    const east = square(bWest + bWidth * 0.85, bSouth + bHeight * 0.1, bWest + bWidth * 0.95, bSouth + bHeight * 0.2);
    const tile = encodeOne({ type: 'MultiPolygon', coordinates: [[exterior, hole], [east]] });
    expect(tile.features).toBe(1);
    const rings = featuresOf(tile.bytes)[0]!.loadGeometry();
    expect(rings.map((ring) => Math.sign(ringAreaOf(ring)))).toEqual([1, -1, 1]);
    expect(classifyRings(rings).map((polygon) => polygon.length)).toEqual([2, 1]);
  });

  test('a polygon crossing the tile edge is clipped to the buffer', () => {
    const crossing = square(bWest + bWidth * 0.5, bSouth - bHeight, bEast + bWidth, bNorth + bHeight);
    const tile = encodeOne({ type: 'Polygon', coordinates: [crossing] });
    const [ring] = featuresOf(tile.bytes)[0]!.loadGeometry();
    const xs = ring!.map((p) => p.x);
    const ys = ring!.map((p) => p.y);
    expect([Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)]).toEqual([EXTENT / 2, EXTENT + 64, -64, EXTENT + 64]);
    expect(ringAreaOf(ring!)).toBeGreaterThan(0);
  });

  test('a polygon covering the tile becomes the buffered tile square, and its hole outside the tile is dropped', () => {
    const big = square(bWest - bWidth, bSouth - bHeight, bEast + bWidth, bNorth + bHeight);
    const away = square(bEast + bWidth * 0.5, bSouth, bEast + bWidth * 0.7, bNorth);
    const tile = encodeOne({ type: 'Polygon', coordinates: [big, away] });
    const rings = featuresOf(tile.bytes)[0]!.loadGeometry();
    expect(rings).toHaveLength(1);
    const corners = rings[0]!.map((p) => `${p.x},${p.y}`);
    expect(new Set(corners)).toEqual(new Set(['-64,-64', '4160,-64', '4160,4160', '-64,4160']));
    expect(ringAreaOf(rings[0]!)).toBe(4224 * 4224);
  });

  test('a polygon smaller than a tile unit vanishes', () => {
    const speck = square(bWest + bWidth * 0.5, bSouth + bHeight * 0.5, bWest + bWidth * 0.50001, bSouth + bHeight * 0.50001);
    expect(encodeOne({ type: 'Polygon', coordinates: [speck] }).features).toBe(0);
  });
});

describe('lines', () => {
  const encodeOne = (geometry: Geometry, z = berlin.z, x = berlinX, y = berlinY) => encodeTile([feature(geometry)], z, x, y, options);
  const midY = bSouth + bHeight / 2;

  test('a line leaving and re-entering the tile becomes a multi-part line', () => {
    const line: Position[] = [
      [bWest + bWidth * 0.2, midY],
      [bEast + bWidth * 0.5, midY],
      [bEast + bWidth * 0.5, midY + bHeight * 0.1],
      [bWest + bWidth * 0.2, midY + bHeight * 0.1],
    ];
    const tile = encodeOne({ type: 'LineString', coordinates: line });
    const decoded = featuresOf(tile.bytes)[0]!;
    expect(decoded.type).toBe(2);
    expect(decoded.toGeoJSON(berlinX, berlinY, berlin.z).geometry.type).toBe('MultiLineString');
    const parts = decoded.loadGeometry();
    expect(parts).toHaveLength(2);
    expect(parts.map((part) => part.map((p) => p.x))).toEqual([
      [Math.round(EXTENT * 0.2), EXTENT + 64],
      [EXTENT + 64, Math.round(EXTENT * 0.2)],
    ]);
  });

  test('a dense line is simplified far more at a low zoom than at a high one', () => {
    const wiggle: Position[] = Array.from({ length: 2001 }, (_, i) => [13.4 + i * 0.00001, 52.5 + 0.0005 * Math.sin(i / 20)]);
    const pointsAt = (z: number) => {
      const [x, y] = tileOf(13.41, 52.5, z);
      const [west, , east] = tileBounds(z, x, y);
      expect([west < 13.4, east > 13.42]).toEqual([true, true]);
      const tile = encodeOne({ type: 'LineString', coordinates: wiggle }, z, x, y);
      return featuresOf(tile.bytes)[0]!.loadGeometry().reduce((sum, part) => sum + part.length, 0);
    };
    expect(pointsAt(4)).toBeLessThanOrEqual(3);
    expect(pointsAt(12)).toBeGreaterThan(100);
    expect(pointsAt(12)).toBeLessThan(2001);
  });
});

test('properties round-trip with their types, and nulls and non-finite numbers are left out', () => {
  const properties = { name: 'Café ☕', count: 42, negative: -7, ratio: 0.25, big: 2 ** 60, bigNegative: -(2 ** 60), yes: true, no: false, empty: '', missing: null, nan: NaN, inf: Infinity };
  const point: Geometry = { type: 'Point', coordinates: [berlin.lon, berlin.lat] };
  const tile = encodeTile([feature(point, properties), feature(point, { ...properties, count: 43 })], berlin.z, berlinX, berlinY, options);
  const [first, second] = featuresOf(tile.bytes);
  const { missing: _missing, nan: _nan, inf: _inf, ...expected } = properties;
  expect({ ...first!.properties }).toStrictEqual(expected);
  expect({ ...second!.properties }).toStrictEqual({ ...expected, count: 43 });
  const tables = { keys: 0, values: 0 };
  const layerStart = new PbfReader(tile.bytes);
  layerStart.readFields((tag, _result, pbf) => {
    if (tag !== 3) return;
    pbf.readMessage((field) => {
      if (field === 3) tables.keys++;
      if (field === 4) tables.values++;
    }, tables);
  }, tables);
  expect(tables).toEqual({ keys: Object.keys(expected).length, values: Object.keys(expected).length + 1 });
});

test('a geometry collection is split into one feature per geometry type', () => {
  const collection: Geometry = {
    type: 'GeometryCollection',
    geometries: [
      { type: 'Point', coordinates: [berlin.lon, berlin.lat] },
      { type: 'LineString', coordinates: [[bWest + bWidth * 0.1, bSouth + bHeight * 0.1], [bWest + bWidth * 0.9, bSouth + bHeight * 0.9]] },
      { type: 'Point', coordinates: [bWest + bWidth * 0.3, bSouth + bHeight * 0.3] },
    ],
  };
  const tile = encodeTile([feature(collection, { id: 'gc' })], berlin.z, berlinX, berlinY, options);
  expect(featuresOf(tile.bytes).map((f) => [f.type, f.loadGeometry().length, f.properties.id])).toEqual([
    [1, 2, 'gc'],
    [2, 1, 'gc'],
  ]);
});

describe.each([
  [4, 10, 4, true],
  [10, 10, 10, false],
  [0, 10, 0, true],
])('with maxFeatures %i and %i points in the tile', (maxFeatures, count, written, truncated) => {
  test(`writes ${written} features, truncated ${truncated}`, () => {
    const points = Array.from({ length: count }, (_, i) => feature({ type: 'Point', coordinates: [bWest + (bWidth * (i + 1)) / (count + 1), berlin.lat] }));
    const outside = feature({ type: 'Point', coordinates: [bEast + bWidth, berlin.lat] });
    const tile = encodeTile([...points, outside], berlin.z, berlinX, berlinY, { ...options, maxFeatures });
    expect([tile.features, tile.truncated]).toEqual([written, truncated]);
    expect(written === 0 ? tile.bytes.length : layerOf(tile.bytes).length).toBe(written);
  });
});

test('invalid geometries are skipped and the valid one is kept', () => {
  const valid = feature({ type: 'Point', coordinates: [berlin.lon, berlin.lat] }, { ok: true });
  const nanPoint = encodeWkb({ type: 'Point', coordinates: [berlin.lon, berlin.lat] });
  new DataView(nanPoint.buffer).setFloat64(5, NaN, true);
  const invalid: Uint8Array[] = [
    new Uint8Array(0),
    Uint8Array.from([7, 1, 0, 0, 0]),
    encodeWkb({ type: 'Point', coordinates: [berlin.lon, berlin.lat] }).subarray(0, 12),
    encodeWkb({ type: 'LineString', coordinates: [[berlin.lon, berlin.lat], [Infinity, berlin.lat]] }),
    nanPoint,
    encodeWkb({ type: 'Point', coordinates: [] }),
    encodeWkb({ type: 'Polygon', coordinates: [] }),
    null as unknown as Uint8Array,
  ];
  const tile = encodeTile([...invalid.map((wkb) => ({ wkb, properties: { ok: false } })), valid], berlin.z, berlinX, berlinY, options);
  expect(tile.features).toBe(1);
  expect(featuresOf(tile.bytes)[0]!.properties).toEqual({ ok: true });
});

test('a feature far outside the tile gives an empty tile', () => {
  const tile = encodeTile([feature({ type: 'Polygon', coordinates: [square(-70, -40, -60, -30)] })], berlin.z, berlinX, berlinY, options);
  expect(tile).toEqual({ bytes: new Uint8Array(0), features: 0, truncated: false });
});

describe('tileBounds', () => {
  test('of 0/0/0 is the whole Mercator world', () => {
    expect(tileBounds(0, 0, 0)).toEqual([-180, -85.0511287798, 180, 85.0511287798]);
  });

  test.each([
    [0, 0, [-180, 0, 0, 85.0511287798]],
    [1, 0, [0, 0, 180, 85.0511287798]],
    [0, 1, [-180, -85.0511287798, 0, 0]],
    [1, 1, [0, -85.0511287798, 180, 0]],
  ])('of z=1 tile x=%i y=%i is its quadrant', (x, y, expected) => {
    tileBounds(1, x, y).forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 9));
  });

  test('grow by the buffer and stay within the world', () => {
    const [west, south, east, north] = tileBounds(1, 0, 0, 64, 4096);
    expect([west, north]).toEqual([-180, 85.0511287798]);
    expect(east).toBeCloseTo((64 / 4096) * 180, 9);
    expect(south).toBeLessThan(0);
  });
});

test.each([
  [0, 0, 0, true],
  [1, 1, 1, true],
  [24, 2 ** 24 - 1, 0, true],
  [1, 2, 0, false],
  [1, 0, -1, false],
  [25, 0, 0, false],
  [-1, 0, 0, false],
  [1.5, 0, 0, false],
  [2, 1, Number.NaN, false],
])('isValidTile(%s, %s, %s) is %s', (z, x, y, valid) => {
  expect(isValidTile(z, x, y)).toBe(valid);
});

test('an invalid tile address is refused by the encoder', () => {
  expect(() => encodeTile([], 1, 2, 0, options)).toThrow(RangeError);
});

/** Tile pixel → lon/lat, the inverse of `tilePixel`. */
const lonLatOf = (px: number, py: number, z: number, x: number, y: number): Position => {
  const size = 2 ** z;
  const wx = (x + px / EXTENT) / size;
  const wy = (y + py / EXTENT) / size;
  return [wx * 360 - 180, (Math.atan(Math.sinh(Math.PI * (1 - 2 * wy))) * 180) / Math.PI];
};

const ringsOf = (bytes: Uint8Array) => (bytes.length === 0 ? [] : featuresOf(bytes).flatMap((f) => f.loadGeometry()));
const spanOf = (ring: { x: number }[]) => Math.max(...ring.map((p) => p.x)) - Math.min(...ring.map((p) => p.x));
const longestEdge = (bytes: Uint8Array) =>
  Math.max(0, ...ringsOf(bytes).flatMap((ring) => ring.slice(1).map((p, i) => Math.max(Math.abs(p.x - ring[i]!.x), Math.abs(p.y - ring[i]!.y)))));
const properlyCross = (a: { x: number; y: number }, b: { x: number; y: number }, c: { x: number; y: number }, d: { x: number; y: number }) => {
  const turn = (p: typeof a, q: typeof a, r: typeof a) => Math.sign((q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x));
  return turn(a, b, c) * turn(a, b, d) < 0 && turn(c, d, a) * turn(c, d, b) < 0;
};
const crossings = (rings: { x: number; y: number }[][]) => {
  const edges = rings.flatMap((ring) => ring.slice(1).map((p, i) => [ring[i]!, p] as const));
  let count = 0;
  for (let i = 0; i < edges.length; i++) for (let j = i + 1; j < edges.length; j++) if (properlyCross(...edges[i]!, ...edges[j]!)) count++;
  return count;
};
const tilesAlong = (z: number, lat: number) => Array.from({ length: 2 ** z }, (_, x) => [z, x, tileOf(0, lat, z)[1]] as const);

/** Fiji's eastern island as world-atlas 2.0.2 drew it before the sample was cut at ±180°: two edges jump across the map. */
const FIJI: Position[] = [
  [-180, -16.067], [-179.795, -16.021], [-179.917, -16.502], [-180, -16.556], [179.363, -16.801], [178.726, -17.011],
  [178.596, -16.639], [179.096, -16.434], [179.413, -16.378], [180, -16.067], [-180, -16.067],
];

describe('across the antimeridian', () => {
  test.each([
    [0, 0, [[174.375, 180 + 5.625 + 360], [-180 - 5.625 - 360, -174.375]]],
    [1, 0, [[177.1875, 362.8125]]],
    [1, 1, [[-362.8125, -177.1875]]],
    [2, 1, []],
  ])('tileWrapBounds of z=%i x=%i is the buffered tile moved a world east or west', (z, x, expected) => {
    const copies = tileWrapBounds(z, x, 0, 64);
    expect(copies.map(([west, , east]) => [west, east])).toEqual(expected);
    for (const [, south, , north] of copies) expect([south, north]).toEqual([tileBounds(z, x, 0, 64)[1], MERCATOR_MAX_LATITUDE]);
  });

  describe.each([0, 1, 2])('a ring with edges longer than 180° (Fiji) at z=%i', (z) => {
    const tiles = tilesAlong(z, -16.5).map(([tz, x, y]) => encodeTile([feature({ type: 'Polygon', coordinates: [FIJI] })], tz, x, y, options).bytes);

    test('goes the short way: it shows at the west and east edges of the world and nowhere between', () => {
      expect(tiles.map((bytes) => bytes.length > 0)).toEqual(tiles.map((_, x) => x === 0 || x === tiles.length - 1));
      const [west, east] = [ringsOf(tiles[0]!), ringsOf(tiles.at(-1)!)];
      expect(Math.min(...west.flat().map((p) => p.x))).toBeLessThan(0);
      expect(Math.max(...east.flat().map((p) => p.x))).toBeGreaterThan(EXTENT);
    });

    test('never spans more than its 1.61° of longitude', () => {
      const units = (1.7 / 360) * 2 ** z * EXTENT;
      for (const bytes of tiles) for (const ring of ringsOf(bytes)) expect(spanOf(ring)).toBeLessThan(units);
    });
  });

  test.each([
    ['a line 20° long across ±180°', { type: 'LineString', coordinates: [[170, 10], [-170, 10]] }],
    ['Fiji', { type: 'Polygon', coordinates: [FIJI] }],
    ['a ring around the south pole', { type: 'Polygon', coordinates: [[[-180, -70], [-90, -75], [0, -70], [90, -75], [180, -70], [-180, -70]]] }],
    ['a polygon as wide as the world', { type: 'Polygon', coordinates: [square(-179, -80, 179, 80)] }],
    ['points beside ±180°', { type: 'MultiPoint', coordinates: [[179.9, 0], [-179.9, 0]] }],
  ] as [string, Geometry][])('no decoded edge of %s spans more than the extent plus twice the buffer, at z0–z2', (_name, geometry) => {
    for (const z of [0, 1, 2]) {
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) expect(longestEdge(encodeTile([feature(geometry)], z, x, y, options).bytes)).toBeLessThanOrEqual(EXTENT + 2 * 64);
      }
    }
  });

  test('a line across ±180° stays beside it, never crossing the middle of the world', () => {
    const rings = ringsOf(encodeTile([feature({ type: 'LineString', coordinates: [[170, 10], [-170, 10]] })], 0, 0, 0, options).bytes);
    expect(rings.map((line) => [Math.min(...line.map((p) => p.x)), Math.max(...line.map((p) => p.x))]).sort((a, b) => a[0]! - b[0]!)).toEqual([
      [-64, Math.round(EXTENT * (10 / 360))],
      [Math.round(EXTENT * (350 / 360)), EXTENT + 64],
    ]);
  });

  test('a point within the buffer of the other side is drawn in the edge tile shifted by 360°', () => {
    const points = (z: number, x: number) => featuresOf(encodeTile([feature({ type: 'Point', coordinates: [179.9, 0.5] })], z, x, tileOf(0, 0.5, z)[1], options).bytes)[0]!.loadGeometry().flat();
    expect(points(0, 0).map((p) => p.x)).toEqual([Math.round(EXTENT * (359.9 / 360)), Math.round(-EXTENT * (0.1 / 360))]);
    expect(points(2, 0).map((p) => p.x)).toEqual([Math.round(-EXTENT * (0.1 / 90))]);
    expect(points(2, 3).map((p) => p.x)).toEqual([Math.round(EXTENT * (89.9 / 90))]);
  });

  describe.each([
    ['as one ring around it (world-atlas 110m)', [[[-180, -70], [-90, -75], [0, -70], [90, -75], [180, -70], [-180, -70]]]],
    ['as a ring beyond the Mercator limit holding the coast as a hole (world-atlas 50m)', [
      [[-180, -89.999], [90, -89.999], [0, -89.999], [-90, -89.999], [-180, -89.999]],
      [[-180, -70], [-90, -75], [0, -70], [90, -75], [180, -70], [-180, -70]],
    ]],
  ] as [string, Position[][]][])('land around the south pole %s', (_name, rings) => {
    test.each([[0, 0, 0], [1, 0, 1], [1, 1, 1], [2, 3, 3]])('fills tile %i/%i/%i from edge to edge, down to the bottom, with no seam', (z, x, y) => {
      const decoded = ringsOf(encodeTile([feature({ type: 'Polygon', coordinates: rings })], z, x, y, options).bytes);
      expect(decoded).toHaveLength(1);
      const ring = decoded[0]!;
      expect([Math.min(...ring.map((p) => p.x)), Math.max(...ring.map((p) => p.x)), Math.max(...ring.map((p) => p.y))]).toEqual([-64, EXTENT + 64, y === 2 ** z - 1 ? EXTENT : EXTENT + 64]);
      expect(ring.filter((p) => p.x > 0 && p.x < EXTENT && (p.x % EXTENT === 0))).toEqual([]);
      expect(ringAreaOf(ring)).toBeGreaterThan(0);
    });
  });
});

describe('polygons the tile grid would break', () => {
  const tile = (geometry: Geometry) => ringsOf(encodeTile([feature(geometry)], berlin.z, berlinX, berlinY, options).bytes);
  const at = (px: number, py: number) => lonLatOf(px, py, berlin.z, berlinX, berlinY);

  test('a ring whose arms reach out of the tile and join outside it becomes one polygon per arm, with no sliver along the buffer', () => {
    const hook = [at(3000, 1000), at(5000, 1000), at(5000, 3000), at(3000, 3000), at(3000, 2500), at(4500, 2500), at(4500, 1500), at(3000, 1500), at(3000, 1000)];
    const rings = tile({ type: 'Polygon', coordinates: [hook] });
    expect(rings.map((ring) => [ring.length, Math.sign(ringAreaOf(ring))])).toEqual([[5, 1], [5, 1]]);
    expect(rings.map((ring) => [Math.min(...ring.map((p) => p.y)), Math.max(...ring.map((p) => p.y))]).sort((a, b) => a[0]! - b[0]!)).toEqual([[1000, 1500], [2500, 3000]]);
  });

  test('a ring that crosses itself (a bow-tie) keeps both lobes as polygons whose edges do not cross', () => {
    const bowTie = [at(1000, 1000), at(3000, 3000), at(3000, 2000), at(1000, 3000), at(1000, 1000)];
    const rings = tile({ type: 'Polygon', coordinates: [bowTie] });
    expect(rings.map((ring) => Math.sign(ringAreaOf(ring)))).toEqual([1, 1]);
    expect(crossings(rings)).toBe(0);
    expect(rings.map(ringAreaOf).sort((a, b) => a - b)).toEqual([expect.closeTo(1000 * 1000 / 3, -4), expect.closeTo(4000 * 1000 / 3, -4)]);
  });
});

describe.each([
  ['2.0.2', 'countries-110m'],
  ['2.0.2', 'countries-50m'],
  ['1.1.4', 'countries-110m'],
  ['1.1.4', 'countries-50m'],
])('the sample countries of world-atlas %s %s, at z0–z2', (version, file) => {
  const rows = (async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const path = join(ROOT, 'catalog-data/data/natural-earth/countries', version, `${file}.parquet`);
    const read = (await connection.runAndReadAll(`SELECT name, st_asbinary(geometry) FROM read_parquet('${path}')`)).getRows();
    connection.closeSync();
    instance.closeSync();
    return read.map(([name, wkb]) => ({ wkb: (wkb as { bytes: Uint8Array }).bytes, properties: { name: String(name) } }));
  })();

  /** Degrees of longitude of the shortest arc that holds every position of a row: 360 for land around a pole. */
  const arcOf = (wkb: Uint8Array) => {
    const lons = JSON.stringify(decodeWkb(wkb)).match(/\[-?[\d.e-]+,/g)!.map((pair) => ((Number(pair.slice(1, -1)) % 360) + 360) % 360).sort((a, b) => a - b);
    const gaps = lons.map((lon, i) => (i === 0 ? lons[0]! + 360 - lons.at(-1)! : lon - lons[i - 1]!));
    return 360 - Math.max(...gaps);
  };

  test('draw no polygon wider than the row it comes from: nothing spans the world but Antarctica, which rings the pole', async () => {
    const features = await rows;
    const arcs = new Map(features.map((row) => [row.properties.name, arcOf(row.wkb)]));
    expect(arcs.get('Antarctica')).toBeGreaterThan(350);
    arcs.set('Antarctica', 360);
    const wide: string[] = [];
    for (const z of [0, 1, 2]) {
      const degrees = 360 / 2 ** z / EXTENT;
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) {
          const tile = encodeTile(features, z, x, y, { ...options, maxFeatures: 1000 });
          for (const decoded of tile.bytes.length === 0 ? [] : featuresOf(tile.bytes)) {
            const arc = arcs.get(String(decoded.properties.name))!;
            for (const [exterior] of classifyRings(decoded.loadGeometry())) {
              if (spanOf(exterior!) * degrees > arc + (2 * 64 + 1) * degrees) wide.push(`${decoded.properties.name} in ${z}/${x}/${y}`);
            }
            expect(longestEdge(tile.bytes)).toBeLessThanOrEqual(EXTENT + 2 * 64);
          }
        }
      }
    }
    expect(wide).toEqual([]);
  });

  test('show Antarctica across the whole width of the world at z0, and Fiji at both of its edges', async () => {
    const decoded = featuresOf(encodeTile(await rows, 0, 0, 0, { ...options, maxFeatures: 1000 }).bytes);
    const xsOf = (name: string) => decoded.filter((f) => f.properties.name === name).flatMap((f) => f.loadGeometry().flat().map((p) => p.x));
    const antarctica = xsOf('Antarctica');
    expect([Math.min(...antarctica), Math.max(...antarctica)]).toEqual([-64, EXTENT + 64]);
    const fiji = xsOf('Fiji');
    expect([fiji.some((x) => x < 64), fiji.some((x) => x > EXTENT - 64), fiji.some((x) => x > 64 && x < EXTENT - 64)]).toEqual([true, true, false]);
  });
});

test('50,000 points at z=4 encode quickly', () => {
  const [x, y] = tileOf(10, 50, 4);
  const [west, south, east, north] = tileBounds(4, x, y);
  const points = Array.from({ length: 50_000 }, (_, i) =>
    feature(
      { type: 'Point', coordinates: [west + ((east - west) * ((i * 7919) % 50_000)) / 50_000, south + ((north - south) * ((i * 104_729) % 50_000)) / 50_000] },
      { id: i, name: `place ${i % 100}`, score: i / 7, open: i % 2 === 0 },
    ),
  );
  encodeTile(points.slice(0, 5000), 4, x, y, { ...options, maxFeatures: 50_000 });
  const started = performance.now();
  const tile = encodeTile(points, 4, x, y, { ...options, maxFeatures: 50_000 });
  const elapsed = performance.now() - started;
  console.log(`encodeTile: 50,000 points at z=4 in ${elapsed.toFixed(1)} ms, ${(tile.bytes.length / 1024).toFixed(0)} KiB`);
  expect(tile.features).toBe(50_000);
});
