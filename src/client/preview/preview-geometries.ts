import { DataType, type Table } from 'apache-arrow';
import { bboxOfGeometry, decodeWkb, type Geometry } from '../../../core/geo/wkb.ts';

/** The geometries of the previewed rows, decoded once for both the table and the map. */
export interface PreviewGeometries {
  /** One per row: the geometry, or null for a null value or bytes that are not WKB. */
  geometries: (Geometry | null)[];
  /** Rows whose value was present but not readable WKB. */
  unreadable: number;
  /** The rows with at least one position, as GeoJSON for the map; `properties.row` is the 1-based row number. */
  features: GeoJSON.FeatureCollection;
}

/** The part of GeoParquet's `geo` file metadata the preview needs. */
interface GeoMetadata {
  primary_column?: string;
  columns?: Record<string, { encoding?: string }>;
}

/**
 * The WKB geometry column to map: the page's own choice when the file has it, else the `primary_column` of
 * GeoParquet's `geo` metadata (`geoText`, read from the footer) when WKB-encoded, else the first
 * `geoarrow.wkb` column; null when none of these is a binary column.
 */
export function resolveGeometryColumn(table: Table, preferred: string | null | undefined, geoText: string | undefined): string | null {
  const binary = new Set(table.schema.fields.filter((field) => isBinaryType(field.type)).map((field) => field.name));
  if (preferred && binary.has(preferred)) return preferred;
  const geo = parseGeoMetadata(geoText ?? table.schema.metadata.get('geo'));
  const primary = geo?.primary_column;
  if (primary && binary.has(primary) && (geo?.columns?.[primary]?.encoding ?? 'WKB').toUpperCase() === 'WKB') return primary;
  const extension = table.schema.fields.find((field) => binary.has(field.name) && field.metadata.get('ARROW:extension:name') === 'geoarrow.wkb');
  return extension?.name ?? null;
}

/** Decodes `column` of every row with the project's one WKB reader (core/geo/wkb.ts). */
export function decodePreviewGeometries(table: Table, column: string): PreviewGeometries {
  const vector = table.getChild(column);
  const geometries: (Geometry | null)[] = [];
  const features: GeoJSON.Feature[] = [];
  let unreadable = 0;
  for (let row = 0; row < table.numRows; row++) {
    const value: unknown = vector?.get(row);
    let geometry: Geometry | null = null;
    if (value instanceof Uint8Array) {
      try {
        geometry = decodeWkb(value);
      } catch {
        unreadable++;
      }
    }
    geometries.push(geometry);
    if (geometry && bboxOfGeometry(geometry)) features.push({ type: 'Feature', id: row, properties: { row: row + 1 }, geometry });
  }
  return { geometries, unreadable, features: { type: 'FeatureCollection', features } };
}

// parquet-wasm's async reader drops the file's key-value metadata from the Arrow schema, so the footer is asked.
function parseGeoMetadata(text: string | undefined): GeoMetadata | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as GeoMetadata;
  } catch {
    return null;
  }
}

function isBinaryType(type: DataType): boolean {
  return DataType.isBinary(type) || DataType.isLargeBinary(type) || DataType.isBinaryView(type);
}
