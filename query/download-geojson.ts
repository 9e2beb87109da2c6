import type { DuckDBValue } from '@duckdb/node-api';
import { createRowConverter, type DownloadWriter } from './download-writer.ts';
import type { JsonValue } from './values.ts';

/**
 * A GeoJSON FeatureCollection, one feature per row: the geometry column as geometry, the others as properties.
 * It holds one chunk in memory at a time.
 */
export const GEOJSON_WRITER: DownloadWriter = {
  create: ({ names, shape, geometries }) => {
    // GeoJSON is WGS84 longitude/latitude by definition (RFC 7946 §4), whatever result_crs asks.
    const { convert, warnings } = createRowConverter(geometries);
    const geometry = names.indexOf(shape.geometry ?? '');
    let first = true;
    const feature = (values: DuckDBValue[]) => {
      // Column names come from the query: no prototype, so a column named __proto__ stays a property.
      const properties: Record<string, JsonValue> = Object.create(null);
      names.forEach((name, index) => index !== geometry && (properties[name] = convert(values, index)));
      return JSON.stringify({ type: 'Feature', geometry: geometry >= 0 ? convert(values, geometry) : null, properties });
    };
    return {
      start: () => '{"type":"FeatureCollection","features":[',
      write: (chunk) => {
        const text = chunk.getRows().map(feature).join(',\n');
        const joined = first ? `\n${text}` : `,\n${text}`;
        first = false;
        return joined;
      },
      end: async () => '\n]}\n',
      warnings: () => warnings,
    };
  },
};
