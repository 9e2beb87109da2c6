import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createProjectedGeometry, readProjectedWkb } from '../core/geo/mvt-read.ts';
import { createTileProjection, projectX, projectY } from '../core/geo/mvt-tile-math.ts';
import { createExtent, finishExtent, inspectWkb } from '../core/geo/wkb-inspect.ts';
import { createWkbReader, openWkb, readWkbHeader } from '../core/geo/wkb-reader.ts';
import { bboxOfGeometry, decodeWkb, encodeWkb, WKB_TYPE_CODES } from '../core/geo/wkb.ts';
import type { Geometry, Position } from '../core/geo/wkb.ts';

const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const doubles = (bigEndian: boolean) => (...values: number[]): string =>
  values.map((value) => {
    const bytes = Buffer.alloc(8);
    if (bigEndian) bytes.writeDoubleBE(value);
    else bytes.writeDoubleLE(value);
    return bytes.toString('hex');
  }).join('');
const le = doubles(false);
const be = doubles(true);

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
    const bytes = encodeWkb({ type: 'LineString', coordinates: [[5, 6], [7, 8]] });
    padded.set(bytes, 11);
    expect(decodeWkb(padded.subarray(11, 11 + bytes.length))).toEqual({ type: 'LineString', coordinates: [[5, 6], [7, 8]] });
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

const nested = (depth: number): Geometry =>
  depth === 0 ? { type: 'Point', coordinates: [1, 2] } : { type: 'GeometryCollection', geometries: [nested(depth - 1)] };
const nestedHex = (depth: number): string => `${'01 07000000 01000000 '.repeat(depth)}01 01000000 ${le(1, 2)}`;

const readerInputs: [string, string, Geometry | null][] = [
  ['a big-endian LineString', `00 00000002 00000002 ${be(1, 2, 3, 4)}`, { type: 'LineString', coordinates: [[1, 2], [3, 4]] }],
  ['an ISO Z Point', `01 E9030000 ${le(1, 2, 3)}`, { type: 'Point', coordinates: [1, 2] }],
  ['an ISO M LineString', `01 D2070000 02000000 ${le(1, 2, 9, 3, 4, 9)}`, { type: 'LineString', coordinates: [[1, 2], [3, 4]] }],
  [
    'a big-endian ISO ZM Polygon',
    `00 00000BBB 00000001 00000004 ${be(0, 0, 9, 9, 1, 0, 9, 9, 1, 1, 9, 9, 0, 0, 9, 9)}`,
    { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] },
  ],
  [
    'an EWKB MultiPoint with Z and M flags',
    `01 040000C0 02000000 01 010000C0 ${le(1, 2, 8, 9)} 01 010000C0 ${le(3, 4, 8, 9)}`,
    { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] },
  ],
  ['an EWKB Point with SRID 4326', `01 01000020 E6100000 ${le(1, 2)}`, { type: 'Point', coordinates: [1, 2] }],
  ['a Point with both the ISO Z code and the EWKB Z flag', `01 E9030080 ${le(1, 2, 3)}`, { type: 'Point', coordinates: [1, 2] }],
  [
    'a big-endian EWKB Z MultiLineString with SRID 3857',
    `00 A0000005 00000F11 00000001 00 80000002 00000002 ${be(1, 2, 0, 3, 4, 0)}`,
    { type: 'MultiLineString', coordinates: [[[1, 2], [3, 4]]] },
  ],
  [
    'a GeometryCollection whose members differ in byte order',
    `01 07000000 02000000 00 00000001 ${be(1, 2)} 01 02000000 02000000 ${le(3, 4, 5, 6)}`,
    { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }, { type: 'LineString', coordinates: [[3, 4], [5, 6]] }] },
  ],
  ['collections nested as deep as the limit of 32', nestedHex(32), nested(32)],
  ['a LineString claiming 3 points but holding 2', `01 02000000 03000000 ${le(1, 2, 3, 4)}`, null],
  ['a LineString claiming 4,294,967,295 points', `01 02000000 FFFFFFFF ${le(1, 2)}`, null],
  ['a Polygon claiming 4,294,967,295 rings', '01 03000000 FFFFFFFF 00000000', null],
  ['a GeometryCollection claiming 4,294,967,295 members', `01 07000000 FFFFFFFF 01 01000000 ${le(1, 2)}`, null],
  ['a MultiPolygon holding a Point', `01 06000000 01000000 01 01000000 ${le(1, 2)}`, null],
  ['collections nested deeper than the limit of 32', nestedHex(33), null],
  ['a Point followed by a trailing byte', `01 01000000 ${le(1, 2)} 00`, null],
  ['a Point cut short', `01 01000000 ${le(1)}`, null],
  ['an EWKB SRID flag without room for the SRID', '01 01000020 E610', null],
  ['a byte order of 2', `02 01000000 ${le(1, 2)}`, null],
  ['the type code 4001', `01 A10F0000 ${le(1, 2, 3, 4, 5)}`, null],
];

const projection = createTileProjection(0, 0, 0, 4096);

const projectedOf = (geometry: Geometry) => {
  const out = { points: [] as number[], lines: [] as number[][], polygons: [] as number[][][] };
  const flat = (positions: Position[]) => positions.flatMap(([lon, lat]) => [projectX(projection, lon!), projectY(projection, lat!)]);
  const add = (part: Geometry): void => {
    if (part.type === 'Point') out.points.push(...flat([part.coordinates]));
    else if (part.type === 'MultiPoint') out.points.push(...flat(part.coordinates));
    else if (part.type === 'LineString') out.lines.push(flat(part.coordinates));
    else if (part.type === 'MultiLineString') out.lines.push(...part.coordinates.map(flat));
    else if (part.type === 'Polygon') out.polygons.push(part.coordinates.map(flat));
    else if (part.type === 'MultiPolygon') out.polygons.push(...part.coordinates.map((rings) => rings.map(flat)));
    else part.geometries.forEach(add);
  };
  add(geometry);
  return out;
};

describe('decoding, inspection and tiles agree on', () => {
  describe.each(readerInputs)('%s', (_name, input, geometry) => {
    const bytes = hex(input);

    if (geometry) {
      test('decodeWkb returns its 2D geometry', () => {
        expect(decodeWkb(bytes)).toEqual(geometry);
      });

      test('inspectWkb calls it valid and spans the same extent', () => {
        const extent = createExtent();
        expect(inspectWkb(bytes, extent)).toEqual({ type: WKB_TYPE_CODES[geometry.type], invalid: undefined });
        expect(finishExtent(extent)).toEqual(bboxOfGeometry(geometry));
      });

      test('the tile reader projects the same positions', () => {
        const out = createProjectedGeometry();
        expect(readProjectedWkb(bytes, projection, out)).toBe(true);
        expect({ points: out.points, lines: out.lines, polygons: out.polygons }).toEqual(projectedOf(geometry));
      });
    } else {
      test('decodeWkb throws', () => {
        expect(() => decodeWkb(bytes)).toThrow(/WKB/);
      });

      test('inspectWkb calls it malformed', () => {
        expect(inspectWkb(bytes, createExtent()).invalid).toBe('malformed');
      });

      test('the tile reader refuses it', () => {
        expect(readProjectedWkb(bytes, projection, createProjectedGeometry())).toBe(false);
      });
    }
  });
});

test.each([
  ['an EWKB Point', `01 01000020 E6100000 ${le(1, 2)}`, 4326],
  ['a big-endian EWKB Z MultiLineString', `00 A0000005 00000F11 00000000`, 3857],
  ['an ISO Point', `01 01000000 ${le(1, 2)}`, 0],
])('the shared reader reads the SRID of %s as %i', (_name, input, srid) => {
  const reader = createWkbReader();
  openWkb(reader, hex(input));
  readWkbHeader(reader, 0, 0);
  expect(reader.srid).toBe(srid);
});
