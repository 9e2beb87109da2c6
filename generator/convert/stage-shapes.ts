/**
 * The middle step of `geoshelf convert`: every row's geometry input is streamed out of the scratch database a
 * chunk at a time, made into WKB and a bbox in JavaScript, and appended to the `shapes` table; then each shape's
 * Hilbert key over the whole extent goes to `keys`. JavaScript holds one chunk at a time.
 */
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import type { PositionTransform } from '../../core/geo/crs.ts';
import { hilbertIndex } from '../../core/geo/hilbert.ts';
import type { BBox, GeometryType } from '../../core/geo/wkb.ts';
import { ConvertError } from './convert-error.ts';
import { encodeShape, RowError, selectGeometryInput } from './encode-geometry.ts';
import type { GeometrySource } from './read-source.ts';

/** What staging found: rows, the geometry types (sorted), and the extent of all geometries (null when none). */
export interface StagedShapes {
  rows: number;
  types: GeometryType[];
  bbox: BBox | null;
}

/** Flush the appender every so many rows, so that DuckDB, not its buffer, holds them. */
const FLUSH_ROWS = 100_000;

/**
 * Reads the geometry input of every row of `source` on `reader` and appends its shape to `shapes` on `writer`,
 * reprojected by `transform` when the input is in another CRS. Every shape is checked to be longitude/latitude,
 * since the output declares OGC:CRS84.
 * @throws ConvertError naming `label` and the row (1-based) whose geometry cannot be read.
 */
export async function stageShapes(
  reader: DuckDBConnection, writer: DuckDBConnection, source: GeometrySource, label: string,
  options: { transform?: PositionTransform | null; onProgress?: ((rows: number) => void) | undefined } = {},
): Promise<StagedShapes> {
  await writer.run('CREATE TABLE shapes (row BIGINT, wkb BLOB, xmin DOUBLE, ymin DOUBLE, xmax DOUBLE, ymax DOUBLE)');
  const appender = await writer.createAppender('shapes');
  const result = await reader.stream(`SELECT rowid, ${selectGeometryInput(source).join(', ')} FROM source`);
  const types = new Set<GeometryType>();
  const extent: BBox = [Infinity, Infinity, -Infinity, -Infinity];
  let rows = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const columns = chunk.getColumns();
    for (let index = 0; index < chunk.rowCount; index++) {
      const row = columns[0]![index] as bigint;
      let shape;
      try {
        shape = encodeShape(source.kind, columns.slice(1).map((column) => column[index] ?? null), options.transform ?? null);
        if (shape?.bbox) assertLonLat(shape.bbox, options.transform != null);
      } catch (error) {
        if (error instanceof RowError) throw new ConvertError(label, `row ${row + 1n}: ${error.message}`);
        throw error;
      }
      appender.appendBigInt(row);
      if (shape === null) {
        for (let column = 0; column < 5; column++) appender.appendNull();
      } else {
        types.add(shape.type);
        appender.appendBlob(shape.wkb);
        if (shape.bbox === null) for (let column = 0; column < 4; column++) appender.appendNull();
        else for (const value of shape.bbox) appender.appendDouble(value);
        if (shape.bbox) growExtent(extent, shape.bbox);
      }
      appender.endRow();
      if (++rows % FLUSH_ROWS === 0) appender.flushSync();
    }
    options.onProgress?.(rows);
  }
  appender.closeSync();
  return { rows, types: [...types].sort(), bbox: extent[0] <= extent[2] ? extent : null };
}

/** Appends the Hilbert key of every shape's bbox centre over `extent` to `keys`. */
export async function stageHilbertKeys(reader: DuckDBConnection, writer: DuckDBConnection, extent: BBox): Promise<void> {
  await writer.run('CREATE TABLE keys (row BIGINT, hilbert UBIGINT)');
  const appender: DuckDBAppender = await writer.createAppender('keys');
  const result = await reader.stream('SELECT row, (xmin + xmax) / 2, (ymin + ymax) / 2 FROM shapes WHERE xmin IS NOT NULL');
  let rows = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const [row, x, y] = chunk.getColumns() as [bigint[], number[], number[]];
    for (let index = 0; index < chunk.rowCount; index++) {
      appender.appendBigInt(row[index]!);
      appender.appendUBigInt(BigInt(hilbertIndex(x[index]!, y[index]!, extent)));
      appender.endRow();
      if (++rows % FLUSH_ROWS === 0) appender.flushSync();
    }
  }
  appender.closeSync();
}

/** A bbox outside −180…180, −90…90 is in another CRS (or, once reprojected, in the wrong one). */
function assertLonLat(bbox: BBox, reprojected: boolean): void {
  const [xmin, ymin, xmax, ymax] = bbox;
  if (xmin >= -180 && xmax <= 180 && ymin >= -90 && ymax <= 90) return;
  const where = `(${xmin}, ${ymin}) … (${xmax}, ${ymax})`;
  throw new RowError(reprojected
    ? `its coordinates reprojected by --crs are ${where}, not longitude/latitude: is --crs the CRS the file is in?`
    : `its coordinates ${where} are not longitude/latitude (−180…180, −90…90): name the CRS they are in with --crs (for example --crs EPSG:2056), and convert reprojects them`);
}

function growExtent(extent: BBox, bbox: BBox): void {
  if (bbox[0] < extent[0]) extent[0] = bbox[0];
  if (bbox[1] < extent[1]) extent[1] = bbox[1];
  if (bbox[2] > extent[2]) extent[2] = bbox[2];
  if (bbox[3] > extent[3]) extent[3] = bbox[3];
}
