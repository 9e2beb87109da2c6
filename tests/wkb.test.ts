import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bboxOfGeometry, decodeWkb, encodeWkb } from '../core/geo/wkb.ts';
import type { Geometry } from '../core/geo/wkb.ts';

const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

const ring = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]];
const hole = [[1, 1], [1, 2], [2, 2], [1, 1]];

const samples: [string, Geometry, string][] = [
  ['Point', { type: 'Point', coordinates: [1.5, -2.25] }, 'POINT (1.5 -2.25)'],
  ['LineString', { type: 'LineString', coordinates: [[0, 0], [1, 1], [2, 0.5]] }, 'LINESTRING (0 0, 1 1, 2 0.5)'],
  ['Polygon with a hole', { type: 'Polygon', coordinates: [ring, hole] }, 'POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (1 1, 1 2, 2 2, 1 1))'],
  ['MultiPoint', { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] }, 'MULTIPOINT (1 2, 3 4)'],
  ['MultiLineString', { type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[2, 2], [3, 3]]] }, 'MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))'],
  [
    'MultiPolygon',
    { type: 'MultiPolygon', coordinates: [[ring], [[[20, 20], [21, 20], [21, 21], [20, 20]]]] },
    'MULTIPOLYGON (((0 0, 10 0, 10 10, 0 10, 0 0)), ((20 20, 21 20, 21 21, 20 20)))',
  ],
  [
    'GeometryCollection',
    { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }, { type: 'LineString', coordinates: [[0, 0], [1, 1]] }] },
    'GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))',
  ],
  ['real-world coordinates', { type: 'Point', coordinates: [-106.65114, 35.084] }, 'POINT (-106.65114 35.084)'],
];

let duckdb: DuckDBConnection;
beforeAll(async () => {
  duckdb = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => duckdb.closeSync());

describe.each(samples)('%s', (_name, geometry, wkt) => {
  test('decodes back to the same geometry', () => {
    expect(decodeWkb(encodeWkb(geometry))).toEqual(geometry);
  });

  test('is read by DuckDB as the same WKT', async () => {
    const reader = await duckdb.runAndReadAll(`SELECT st_astext(st_geomfromwkb(from_hex('${toHex(encodeWkb(geometry))}')))`);
    expect(reader.getRows()[0]?.[0]).toBe(wkt);
  });

  test('decodes what DuckDB writes', async () => {
    const reader = await duckdb.runAndReadAll(`SELECT hex(st_asbinary('${wkt}'::GEOMETRY))`);
    expect(decodeWkb(hex(String(reader.getRows()[0]?.[0])))).toEqual(geometry);
  });
});

describe('hand-written WKB', () => {
  test('decodes and encodes the OGC example POINT(1 1) in little-endian (NDR)', () => {
    const ogcPoint = '01 01000000 000000000000F03F 000000000000F03F';
    expect(decodeWkb(hex(ogcPoint))).toEqual({ type: 'Point', coordinates: [1, 1] });
    expect(toHex(encodeWkb({ type: 'Point', coordinates: [1, 1] }))).toBe(ogcPoint.replace(/\s/g, '').toLowerCase());
  });

  test('decodes a big-endian (XDR) polygon with a hole', () => {
    const xdrPolygon = [
      '00 00000003 00000002',
      '00000005 0000000000000000 0000000000000000 4024000000000000 0000000000000000',
      '4024000000000000 4024000000000000 0000000000000000 4024000000000000 0000000000000000 0000000000000000',
      '00000004 3FF0000000000000 3FF0000000000000 3FF0000000000000 4000000000000000',
      '4000000000000000 4000000000000000 3FF0000000000000 3FF0000000000000',
    ].join(' ');
    expect(decodeWkb(hex(xdrPolygon))).toEqual({ type: 'Polygon', coordinates: [ring, hole] });
  });

  test('drops Z and M ordinates of ISO type codes', () => {
    const pointZ = '01 E9030000 000000000000F03F 0000000000000040 0000000000000840';
    const lineM = '00 000007D2 00000001 3FF0000000000000 4000000000000000 4010000000000000';
    const pointZM = '01 B90B0000 000000000000F03F 0000000000000040 0000000000000840 0000000000001040';
    expect(decodeWkb(hex(pointZ))).toEqual({ type: 'Point', coordinates: [1, 2] });
    expect(decodeWkb(hex(lineM))).toEqual({ type: 'LineString', coordinates: [[1, 2]] });
    expect(decodeWkb(hex(pointZM))).toEqual({ type: 'Point', coordinates: [1, 2] });
  });

  test('reads PostGIS EWKB with an SRID and a Z flag', () => {
    const ewkb = '01 010000A0 E6100000 000000000000F03F 0000000000000040 0000000000000840';
    expect(decodeWkb(hex(ewkb))).toEqual({ type: 'Point', coordinates: [1, 2] });
  });

  test('reads WKB that starts inside a larger buffer', () => {
    const padded = new Uint8Array(64);
    padded.set(encodeWkb({ type: 'LineString', coordinates: [[5, 6], [7, 8]] }), 11);
    expect(decodeWkb(padded.subarray(11))).toEqual({ type: 'LineString', coordinates: [[5, 6], [7, 8]] });
  });
});

describe('edge cases', () => {
  test('an empty point round-trips as POINT(NaN NaN)', () => {
    const bytes = encodeWkb({ type: 'Point', coordinates: [] });
    expect(toHex(bytes)).toBe('0101000000000000000000f87f000000000000f87f');
    expect(decodeWkb(bytes)).toEqual({ type: 'Point', coordinates: [] });
  });

  test('truncated input is rejected with a message', () => {
    const bytes = encodeWkb({ type: 'LineString', coordinates: [[0, 0], [1, 1]] });
    expect(() => decodeWkb(bytes.subarray(0, bytes.length - 1))).toThrow(/truncated/);
  });

  test('an unknown type code is rejected', () => {
    expect(() => decodeWkb(hex('01 11000000'))).toThrow(/unsupported WKB geometry type/);
  });

  test('a count larger than the input is rejected before allocating', () => {
    expect(() => decodeWkb(hex('01 02000000 FFFFFFFF'))).toThrow(/truncated/);
  });
});

describe('bboxOfGeometry', () => {
  test.each([
    ['a polygon', { type: 'Polygon', coordinates: [ring, hole] } as Geometry, [0, 0, 10, 10]],
    ['a collection', samples[6]?.[1] as Geometry, [0, 0, 1, 2]],
    ['a point', { type: 'Point', coordinates: [3, -4] } as Geometry, [3, -4, 3, -4]],
  ])('spans %s', (_name, geometry, expected) => {
    expect(bboxOfGeometry(geometry)).toEqual(expected);
  });

  test('is null for an empty geometry', () => {
    expect(bboxOfGeometry({ type: 'MultiPolygon', coordinates: [] })).toBeNull();
    expect(bboxOfGeometry({ type: 'Point', coordinates: [] })).toBeNull();
  });
});
