import { tableFromIPC, type Table } from 'apache-arrow';
import initParquetWasm, { ParquetFile, type ParquetMetaData } from 'parquet-wasm/esm';
import { resolveGeometryColumn } from './preview-geometries.ts';
import { PREVIEW_TIMEOUT_MS, PreviewError, withTimeout } from './preview-error.ts';
import { compileParquetWasm } from './compile-parquet-wasm.ts';
import { probeRanges, type RangeProbe } from './probe-ranges.ts';
import { watchRanges, type RangeTally } from './watch-ranges.ts';

/** The first rows of a GeoParquet file, as read in the browser. */
export interface Preview {
  /** The rows read, every column, as Arrow. */
  table: Table;
  /** Rows in the whole file, from its footer. */
  totalRows: number;
  /** The whole file's size in bytes, when its host said. */
  fileSize: number | null;
  /** False when the host ignored `Range` and the (small) file was read whole instead. */
  ranged: boolean;
  /** Requests made for the file and the body bytes they fetched (null when a response did not say). */
  fetched: RangeTally;
  /** The WKB geometry column shown on the map, or null when the file has none. */
  geometryColumn: string | null;
}

/** What to read: how many rows, and the geometry column the page already knows (from the data dictionary). */
export interface ReadPreviewOptions {
  rows: number;
  geometryColumn?: string | null;
  /** parquet-wasm's wasm module, already on its way (see `compileParquetWasm`); fetched here when absent. */
  wasm?: Promise<WebAssembly.Module>;
}

let initializing: Promise<unknown> | undefined;

/**
 * Reads the first `rows` rows of the Parquet file at `url` with parquet-wasm over HTTP range requests: the
 * footer, then only the column chunks of the row groups that hold those rows, never the whole file.
 * A host that ignores `Range` still works for a small file (see `probeRanges`) and fails clearly for a large one.
 * @example const preview = await readPreview(new URL('/data/x.parquet', location.href).href, { rows: 100 });
 * @throws PreviewError with a sentence for the status line; never hangs past `PREVIEW_TIMEOUT_MS`.
 */
export function readPreview(url: string, options: ReadPreviewOptions): Promise<Preview> {
  const seconds = PREVIEW_TIMEOUT_MS / 1000;
  return withTimeout(readRows(url, options), PREVIEW_TIMEOUT_MS, `The preview gave up after ${seconds} seconds: the data file's host is too slow or sent something parquet-wasm could not read.`);
}

async function readRows(url: string, options: ReadPreviewOptions): Promise<Preview> {
  // The probe's round trip overlaps the compilation of the 5 MB wasm module. A failed start is tried again next time.
  initializing ??= initParquetWasm({ module_or_path: options.wasm ?? compileParquetWasm() }).catch((error: unknown) => {
    initializing = undefined;
    throw error;
  });
  const fetched: RangeTally = { requests: 0, bytes: 0 };
  const [probe] = await Promise.all([probeRanges(url, fetched), initializing]);
  const file = await openFile(url, probe, fetched);
  const metadata = file.metadata();
  try {
    const fileMetadata = metadata.fileMetadata();
    const totalRows = fileMetadata.numRows();
    const geoText: unknown = fileMetadata.keyValueMetadata().get('geo');
    fileMetadata.free();
    const rowGroups = rowGroupsFor(metadata, options.rows);
    const read = await watchRanges(url, probe.size, fetched, () => file.read({ limit: options.rows, batchSize: options.rows, rowGroups }));
    const table = tableFromIPC(read.intoIPCStream());
    const geometryColumn = resolveGeometryColumn(table, options.geometryColumn, typeof geoText === 'string' ? geoText : undefined);
    return { table, totalRows, fileSize: probe.size, ranged: probe.body === null, fetched, geometryColumn };
  } finally {
    metadata.free();
    file.free();
  }
}

async function openFile(url: string, probe: RangeProbe, fetched: RangeTally): Promise<ParquetFile> {
  try {
    if (probe.body) return await ParquetFile.fromFile(new Blob([probe.body as Uint8Array<ArrayBuffer>]));
    return await watchRanges(url, probe.size, fetched, () => ParquetFile.fromUrl(url));
  } catch (error) {
    throw new PreviewError(`The data file's Parquet footer could not be read: ${String(error instanceof Error ? error.message : error).slice(0, 160)}`);
  }
}

// The leading row groups that together hold `rows` rows: naming them keeps the reader off every other one.
function rowGroupsFor(metadata: ParquetMetaData, rows: number): number[] {
  const groups: number[] = [];
  let covered = 0;
  for (let index = 0; index < metadata.numRowGroups() && covered < rows; index++) {
    const group = metadata.rowGroup(index);
    covered += group.numRows();
    group.free();
    groups.push(index);
  }
  return groups;
}
