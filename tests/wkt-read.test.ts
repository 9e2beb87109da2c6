import { describe, expect, it } from 'vitest';
import { geometryToWkt } from '../core/geo/wkt.ts';
import { readWkt } from '../core/geo/wkt-read.ts';
import type { Geometry } from '../core/geo/wkb.ts';

describe('readWkt', () => {
  it.each<[string, Geometry]>([
    ['a point', { type: 'Point', coordinates: [2.3522, 48.8566] }],
    ['an empty point', { type: 'Point', coordinates: [] }],
    ['a line', { type: 'LineString', coordinates: [[0, 0], [1.5, -2e-7]] }],
    ['a polygon with a hole', { type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 4], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 1]]] }],
    ['a multipoint', { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] }],
    ['a multipolygon', { type: 'MultiPolygon', coordinates: [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[5, 5], [6, 5], [6, 6], [5, 5]]]] }],
    ['a collection', { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }, { type: 'LineString', coordinates: [] }] }],
  ])('reads back %s as geometryToWkt writes it', (_name, geometry) => {
    expect(readWkt(geometryToWkt(geometry))).toEqual(geometry);
  });

  it.each<[string, Geometry]>([
    ['MULTIPOINT (1 2, 3 4)', { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] }],
    ['point z (1 2 3)', { type: 'Point', coordinates: [1, 2] }],
    ['SRID=4326;POINT(1 2)', { type: 'Point', coordinates: [1, 2] }],
  ])('reads %s, the other spellings found in CSV files', (text, geometry) => {
    expect(readWkt(text)).toEqual(geometry);
  });

  it.each(['POINT (1)', 'POINT (1 2', 'CIRCLE (1 2)', 'POINT (1 2) trailing', '', 'POINT (1 2, 3 4)', 'POINT (1 2 3 4 5)'])('rejects %j, saying where', (text) => {
    expect(() => readWkt(text)).toThrow(/^expected .* at character \d+/);
  });
});
