import { bboxOfGeometry, type Geometry, type Position } from '../../../core/geo/wkb.ts';
import { formatCount } from '../../format.ts';
import { formatDecimal } from './format-text.ts';

// Five decimals of a degree are about a metre: enough to recognise a place in a table cell.
const DIGITS = 5;

/**
 * A short WKT-like line for a table cell: the type in WKT spelling, then the point itself or what the
 * geometry is made of, never every coordinate.
 * @example summarizeGeometry({ type: 'Point', coordinates: [1.65362, 42.57952] }) // 'POINT (1.65362 42.57952)'
 * @example summarizeGeometry(fiji) // 'MULTIPOLYGON (3 polygons, 27 points)'
 */
export function summarizeGeometry(geometry: Geometry): string {
  const name = geometry.type.toUpperCase();
  const parts = describeParts(geometry);
  return parts === null ? `${name} EMPTY` : `${name} (${parts})`;
}

/** The geometry's bounding box as a sentence, for a cell's title; empty for a geometry with no position. */
export function describeGeometryBounds(geometry: Geometry): string {
  const box = bboxOfGeometry(geometry);
  if (!box) return '';
  const [west, south, east, north] = box.map((value) => formatDecimal(value, DIGITS));
  return `Bounds: west ${west}, south ${south}, east ${east}, north ${north}`;
}

function describeParts(geometry: Geometry): string | null {
  switch (geometry.type) {
    case 'Point':
      return geometry.coordinates.length === 0 ? null : formatPosition(geometry.coordinates);
    case 'LineString':
    case 'MultiPoint':
      return countPositions(geometry.coordinates.length);
    case 'Polygon':
      return listParts(geometry.coordinates.length, 'ring', sumLengths(geometry.coordinates));
    case 'MultiLineString':
      return listParts(geometry.coordinates.length, 'line', sumLengths(geometry.coordinates));
    case 'MultiPolygon':
      return listParts(geometry.coordinates.length, 'polygon', geometry.coordinates.reduce((sum, rings) => sum + sumLengths(rings), 0));
    case 'GeometryCollection':
      return geometry.geometries.length === 0 ? null : plural(geometry.geometries.length, 'geometry', 'geometries');
  }
}

function formatPosition(position: Position): string {
  return position.map((value) => formatDecimal(value, DIGITS)).join(' ');
}

function listParts(count: number, noun: string, positions: number): string | null {
  return count === 0 ? null : `${plural(count, noun, `${noun}s`)}, ${plural(positions, 'point', 'points')}`;
}

function countPositions(count: number): string | null {
  return count === 0 ? null : plural(count, 'point', 'points');
}

function sumLengths(lists: Position[][]): number {
  return lists.reduce((sum, list) => sum + list.length, 0);
}

function plural(count: number, one: string, many: string): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}
