import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DuckDBTypeId, type DuckDBConnection, type DuckDBType } from '@duckdb/node-api';
import { CSV_WRITER } from './download-csv.ts';
import type { DownloadFormat } from '../core/api/download-formats.ts';
import { GEOJSON_WRITER } from './download-geojson.ts';
import { PARQUET_WRITER } from './download-parquet.ts';
import type { DownloadWriter, ResultWriter } from './download-writer.ts';
import { queryFailure } from './errors.ts';
import type { ExportValue, QueryTask } from './protocol.ts';
import { shapeOf, subquery, type ResultShape } from './result-shape.ts';

/**
 * Whole results as files (the `export` task kind), in a download format (core/api/download-formats.ts), at most the
 * download row limit. The worker streams the result from its sandbox chunk by chunk through the format's writer
 * and writes the file itself, into a private folder the API process made for this one task; DuckDB never writes
 * (its sandbox keeps external access off), so a query can write nothing anywhere.
 */

/** The writer of each download format: the compiler asks for one here when a format is declared. */
const WRITERS: Record<DownloadFormat, DownloadWriter> = { parquet: PARQUET_WRITER, geojson: GEOJSON_WRITER, csv: CSV_WRITER };

/** A task writing a whole result to `path`. */
export type ExportTask = Extract<QueryTask, { kind: 'export' }>;

/** Refuses, before anything runs, a download its format cannot write (a result_crs it cannot declare). */
export function checkDownload(format: DownloadFormat, resultCrs: string | undefined): void {
  if (resultCrs !== undefined) WRITERS[format].checkCrs?.(resultCrs);
}

/** Runs an export task in its sandbox: at most `maxRows` rows, or the whole task fails with `download_too_many_rows`. */
export async function runExport(connection: DuckDBConnection, task: ExportTask, isInterrupted: () => boolean): Promise<ExportValue> {
  const result = await connection.stream(`SELECT * FROM ${subquery(task.sql)} LIMIT ${task.maxRows + 1}`);
  const names = result.columnNames();
  const types = result.columnTypes();
  const writer = createWriter(task, names, types, shapeOf(names, types.map(String), task.geometryColumn));
  const file = await open(task.path, 'wx', 0o600);
  try {
    let rows = 0;
    await put(file, writer.start());
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      if (isInterrupted()) break;
      rows += chunk.rowCount;
      if (rows > task.maxRows) throw queryFailure('download_too_many_rows', task.maxRows);
      await put(file, writer.write(chunk));
    }
    // An interrupt ends a stream as if the result had ended (DESIGN.md, "Query sandbox").
    if (isInterrupted()) throw queryFailure('query_timeout');
    await put(file, await writer.end());
    return { rows, bytes: (await file.stat()).size, warnings: [...writer.warnings()] };
  } finally {
    await file.close();
  }
}

/** Writes text or bytes to a file (FileHandle.write takes each through its own overload). */
function put(file: FileHandle, data: string | Uint8Array): Promise<unknown> {
  return typeof data === 'string' ? file.write(data) : file.write(data);
}

/** The writer of the task's format, for a result with these columns. */
function createWriter(task: ExportTask, names: string[], types: DuckDBType[], shape: ResultShape): ResultWriter {
  const geometries = new Set(names.flatMap((name, index) => (name === shape.geometry || types[index]!.typeId === DuckDBTypeId.GEOMETRY ? [index] : [])));
  return WRITERS[task.format].create({ names, types, shape, geometries, resultCrs: task.resultCrs });
}

/** A written download, open for reading; its file is already removed, so nothing is left behind whatever happens. */
export interface ResultFile {
  rows: number;
  bytes: number;
  warnings: string[];
  /** The file's bytes; reading them to the end, or cancelling, closes the file. */
  body: ReadableStream<Uint8Array>;
  /** Closes the file unread (for HEAD). */
  discard: () => Promise<void>;
}

/**
 * Runs `write` with the path of a new file in a private folder (mode 0700, made for this call), then opens the
 * file and removes the folder before anything is sent: the open file is all that is left, and the system frees
 * it when it is closed. A failed or timed-out write leaves nothing either.
 */
export async function withResultFile(format: DownloadFormat, write: (path: string) => Promise<ExportValue>): Promise<ResultFile> {
  const folder = await mkdtemp(join(tmpdir(), 'geoshelf-download-'));
  try {
    const path = join(folder, `result.${format}`);
    const value = await write(path);
    const file = await open(path, 'r');
    const stream = file.createReadStream();
    return {
      ...value,
      body: Readable.toWeb(stream) as ReadableStream<Uint8Array>,
      discard: async () => {
        stream.destroy();
        await file.close().catch(() => undefined);
      },
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
