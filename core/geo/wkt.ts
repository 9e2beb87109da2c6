import type { Geometry, Position } from './wkb.ts';

/**
 * Writes a GeoJSON geometry as OGC Well-Known Text (Simple Features 1.2.1), as CSV downloads hold geometries:
 * `POINT (1 2)`, `POLYGON ((…), (…))`, `MULTIPOINT ((1 2), (3 4))`, `LINESTRING EMPTY`. Numbers are written in
 * JavaScript's shortest round-trip form, so reading the text back gives the same doubles.
 * @example geometryToWkt({ type: 'Point', coordinates: [1.5, 2] }) // 'POINT (1.5 2)'
 */
export function geometryToWkt(geometry: Geometry): string {
  const name = geometry.type.toUpperCase();
  switch (geometry.type) {
    case 'Point':
      return geometry.coordinates.length === 0 ? `${name} EMPTY` : `${name} (${position(geometry.coordinates)})`;
    case 'LineString':
      return `${name} ${sequence(geometry.coordinates)}`;
    case 'Polygon':
    case 'MultiLineString':
      return `${name} ${list(geometry.coordinates, sequence)}`;
    case 'MultiPoint':
      return `${name} ${list(geometry.coordinates, (point) => (point.length === 0 ? 'EMPTY' : `(${position(point)})`))}`;
    case 'MultiPolygon':
      return `${name} ${list(geometry.coordinates, (polygon) => list(polygon, sequence))}`;
    case 'GeometryCollection':
      return `${name} ${list(geometry.geometries, geometryToWkt)}`;
  }
}

function position(coordinates: Position): string {
  return coordinates.join(' ');
}

function sequence(positions: Position[]): string {
  return list(positions, position);
}

function list<T>(items: T[], write: (item: T) => string): string {
  return items.length === 0 ? 'EMPTY' : `(${items.map(write).join(', ')})`;
}
