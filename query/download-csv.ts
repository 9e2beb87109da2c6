import type { Geometry } from '../core/geo/wkb.ts';
import { geometryToWkt } from '../core/geo/wkt.ts';
import { createRowConverter, type DownloadWriter } from './download-writer.ts';
import type { JsonValue } from './values.ts';

/**
 * CSV (RFC 4180): a header of column names, CRLF line ends, geometries as WKT in result_crs, nested values as
 * JSON. It holds one chunk in memory at a time.
 */
export const CSV_WRITER: DownloadWriter = {
  create: ({ names, geometries, resultCrs }) => {
    const { convert, warnings } = createRowConverter(geometries, resultCrs);
    const text = (value: JsonValue, isGeometry: boolean) => {
      if (value === null) return '';
      if (isGeometry && typeof value === 'object') return geometryToWkt(value as unknown as Geometry);
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
    };
    const line = (fields: string[]) => `${fields.map(quoteCsv).join(',')}\r\n`;
    return {
      start: () => line(names),
      write: (chunk) => chunk.getRows().map((values) => line(names.map((_, index) => text(convert(values, index), geometries.has(index))))).join(''),
      end: async () => '',
      warnings: () => warnings,
    };
  },
};

/** A CSV field, quoted when it holds a comma, a quote or a line break (quotes doubled inside). */
function quoteCsv(field: string): string {
  return /[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}
