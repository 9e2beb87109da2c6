/**
 * How a result value reads in a table cell: text a person can scan, with the full value kept for a tooltip.
 * Geometries (GeoJSON from the query service, decoded WKB in the browser) read as a short summary.
 */
import type { Geometry } from '../../../core/geo/wkb.ts';

/** Longest text shown in a cell; the rest is in the cell's title. */
const MAX_CELL_LENGTH = 160;

/** A cell's text, and the full text when the cell shows less. */
export interface CellText {
  text: string;
  full?: string;
  /** null, which the table styles apart from the string "null". */
  isNull?: boolean;
}

/**
 * Formats one value of a result row.
 * @example formatCell({ type: 'Point', coordinates: [2.35, 48.85] }) // { text: 'POINT (2.35 48.85)' }
 */
export function formatCell(value: unknown): CellText {
  if (value === null || value === undefined) return { text: 'null', isNull: true };
  if (typeof value === 'string') return cut(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return { text: String(value) };
  if (value instanceof Date) return { text: value.toISOString() };
  if (value instanceof Uint8Array) return { text: `${value.byteLength} bytes` };
  if (isGeometry(value)) return { text: describeGeometry(value) };
  return cut(JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? String(item) : item)));
}

/** Whether a value is a GeoJSON geometry object. */
export function isGeometry(value: unknown): value is Geometry {
  if (typeof value !== 'object' || value === null) return false;
  const { type } = value as { type?: unknown };
  return typeof type === 'string' && (type === 'GeometryCollection' ? 'geometries' in value : 'coordinates' in value)
    && ['Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection'].includes(type);
}

/**
 * A geometry in a few words: a point's coordinates, or the type with its parts and positions.
 * @example describeGeometry({ type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] }) // 'Polygon, 4 positions'
 */
export function describeGeometry(geometry: Geometry): string {
  if (geometry.type === 'Point') {
    return geometry.coordinates.length === 0 ? 'POINT EMPTY' : `POINT (${geometry.coordinates.map((n) => round(n)).join(' ')})`;
  }
  if (geometry.type === 'GeometryCollection') return `GeometryCollection, ${geometry.geometries.length} geometries`;
  const positions = countPositions(geometry.coordinates);
  const parts = geometry.type.startsWith('Multi') ? `${geometry.coordinates.length} parts, ` : '';
  return `${geometry.type}, ${parts}${positions} position${positions === 1 ? '' : 's'}`;
}

function countPositions(coordinates: unknown): number {
  if (!Array.isArray(coordinates)) return 0;
  if (typeof coordinates[0] === 'number') return 1;
  return coordinates.reduce((sum: number, item: unknown) => sum + countPositions(item), 0);
}

function round(value: number): string {
  return String(Math.round(value * 1e6) / 1e6);
}

function cut(text: string): CellText {
  return text.length > MAX_CELL_LENGTH ? { text: `${text.slice(0, MAX_CELL_LENGTH)}…`, full: text } : { text };
}
