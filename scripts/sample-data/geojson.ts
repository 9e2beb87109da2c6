/**
 * Formats a FeatureTable as an RFC 7946 FeatureCollection with a fixed key
 * order and one feature per line, so the file is byte-stable and diffs well.
 */
import type { Geometry } from '../../core/geo/wkb.ts';
import type { FeatureTable } from './table.ts';

function orderGeometryKeys(geometry: Geometry): object {
  if (geometry.type === 'GeometryCollection') {
    return { type: geometry.type, geometries: geometry.geometries.map(orderGeometryKeys) };
  }
  return { type: geometry.type, coordinates: geometry.coordinates };
}

/**
 * The GeoJSON text of a table: `{"type":"FeatureCollection","features":[…]}`
 * with each feature as `{"type","properties","geometry"}` and properties in
 * column order. Coordinates are written as JavaScript prints them (shortest
 * round-trip form), so no precision is lost.
 */
export function formatGeoJson(table: FeatureTable): string {
  const features = table.rows.map((row) => {
    const properties = Object.fromEntries(table.columns.map((column, index) => [column.name, row.values[index] ?? null]));
    return JSON.stringify({ type: 'Feature', properties, geometry: orderGeometryKeys(row.geometry) });
  });
  return `{"type":"FeatureCollection","features":[\n${features.join(',\n')}\n]}\n`;
}
