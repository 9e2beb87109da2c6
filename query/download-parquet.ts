import type { DuckDBType } from '@duckdb/node-api';
import { RecordBatch, Table, tableToIPC } from 'apache-arrow';
import { isLonLat } from '../core/geo/crs.ts';
import { createExtent, finishExtent, inspectWkb, WKB_TYPE_NAMES } from '../core/geo/wkb-inspect.ts';
import { createArrowBatchBuilder, crsOfType, parseJsonObject } from './arrow.ts';
import type { DownloadWriter, ResultWriter, WriterInput } from './download-writer.ts';
import { queryFailure } from './errors.ts';
import type { ResultShape } from './result-shape.ts';

/** GeoParquet 1.1 ({@link createParquetWriter}); it holds the whole result as Arrow until the end. */
export const PARQUET_WRITER: DownloadWriter = {
  /**
   * GeoParquet files declare their CRS as PROJJSON, which proj4 cannot write: a download in another CRS than
   * longitude/latitude cannot say what it is, so it is refused before anything runs.
   */
  checkCrs: (resultCrs) => {
    if (!isLonLat(resultCrs)) throw queryFailure('download_crs_not_supported', resultCrs);
  },
  create: (input) => createParquetWriter(input),
};

/**
 * GeoParquet 1.1: the result as Arrow (geometries as WKB), written by parquet-wasm with zstd and the `geo`
 * metadata: every geometry column with its types and bbox, the CRS when the data's type carries PROJJSON
 * (else none, which means OGC:CRS84), and the bbox covering when the result keeps one beside its geometry.
 * DuckDB 1.5's own GeoParquet writer would say version 1.0.0. A result without geometry is plain Parquet.
 */
function createParquetWriter({ names, types, shape, geometries }: WriterInput): ResultWriter {
  const builder = createArrowBatchBuilder(names, types, { geometry: shape.geometry, resultCrs: undefined });
  const batches: RecordBatch[] = [];
  const columns = [...geometries].map((index) => ({ index, types: new Set<string>(), extent: createExtent() }));
  return {
    start: () => '',
    write: (chunk) => {
      const values = chunk.getColumns();
      builder.appendColumns(values);
      for (const column of columns) {
        for (const value of values[column.index]!) {
          const bytes = (value as { bytes?: Uint8Array } | null)?.bytes;
          if (bytes) recordGeometry(column, bytes);
        }
      }
      batches.push(builder.flush());
      return '';
    },
    end: async () => {
      const { Compression, Table: WasmTable, WriterPropertiesBuilder, writeParquet } = await import('parquet-wasm');
      const table = batches.length > 0 ? new Table(batches) : new Table(builder.schema);
      let properties = new WriterPropertiesBuilder().setCompression(Compression.ZSTD);
      if (shape.geometry !== null) {
        const geo = {
          version: '1.1.0',
          primary_column: shape.geometry,
          columns: Object.fromEntries(columns.map((column) => [names[column.index]!, describeColumn(column, types[column.index]!, shape, names[column.index]!)])),
        };
        properties = properties.setKeyValueMetadata(new Map([['geo', JSON.stringify(geo)]]));
      }
      return writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), properties.build());
    },
    warnings: () => builder.warnings,
  };
}

interface GeometryColumnStats {
  types: Set<string>;
  extent: ReturnType<typeof createExtent>;
}

/** Counts a geometry's type (with " Z" when it has one, as GeoParquet names them) and grows the column's extent. */
function recordGeometry(column: GeometryColumnStats, bytes: Uint8Array): void {
  const inspection = inspectWkb(bytes, column.extent);
  if (inspection.type === 0 || bytes.byteLength < 5) return;
  const code = new DataView(bytes.buffer, bytes.byteOffset, 5).getUint32(1, bytes[0] === 1);
  // ISO codes 1001–1007 and 3001–3007 and the EWKB flag 0x80000000 carry Z.
  const hasZ = (code & 0x80000000) !== 0 || [1, 3].includes(Math.floor((code & 0xffff) / 1000));
  column.types.add(`${WKB_TYPE_NAMES[inspection.type]}${hasZ ? ' Z' : ''}`);
}

/** The `geo` metadata of one column. */
function describeColumn(column: GeometryColumnStats, type: DuckDBType, shape: ResultShape, name: string): Record<string, unknown> {
  const bbox = finishExtent(column.extent);
  const crs = crsOfType(type);
  const projjson = crs === undefined ? undefined : parseJsonObject(crs);
  const covering = name === shape.geometry && shape.hasBbox
    ? { covering: { bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] } } }
    : {};
  return { encoding: 'WKB', geometry_types: [...column.types].sort(), ...(bbox ? { bbox } : {}), ...(projjson ? { crs: projjson } : {}), ...covering };
}
