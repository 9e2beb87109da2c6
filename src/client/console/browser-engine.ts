/**
 * SQL in this browser: parquet-wasm reads each source file, its Arrow IPC stream goes into DuckDB-wasm as a
 * table named by the alias, and the query runs there. Loaded by `import()` only when a person asks for this
 * mode: DuckDB-wasm is about 35 MB. Only the `eh` bundle ships. DuckDB's `read_parquet` and extensions are never
 * used: offline they try to download from the internet and fail.
 */
import { AsyncDuckDB, VoidLogger, type AsyncDuckDBConnection } from '@duckdb/duckdb-wasm';
import duckdbWasmUrl from '@duckdb/duckdb-wasm/dist/duckdb-eh.wasm?url';
import duckdbWorkerUrl from '@duckdb/duckdb-wasm/dist/duckdb-browser-eh.worker.js?url';
import initParquet, { readParquet } from 'parquet-wasm/esm';
import parquetWasmUrl from 'parquet-wasm/esm/parquet_wasm_bg.wasm?url';
import { formatBytes } from '../../format.ts';
import type { ConsoleSource } from './source-catalog.ts';
import { quoteIdentifier, runBrowserQuery, type BrowserQuery } from './browser-query.ts';

/** The in-browser engine, once loaded. */
export interface BrowserEngine {
  /** Makes each source a table named by its alias, reading only files not read yet; drops tables of removed sources. */
  load(sources: readonly ConsoleSource[], progress: (message: string) => void): Promise<void>;
  /** Runs `sql` over the loaded tables; the result is kept for its pages and its map. */
  run(sql: string): Promise<BrowserQuery>;
}

let engine: Promise<BrowserEngine> | undefined;

/**
 * The engine, started on first call (DuckDB-wasm and parquet-wasm fetched and compiled); a failed start is
 * retried on the next call.
 */
export function loadBrowserEngine(progress: (message: string) => void): Promise<BrowserEngine> {
  engine ??= startEngine(progress);
  engine.catch(() => { engine = undefined; });
  return engine;
}

async function startEngine(progress: (message: string) => void): Promise<BrowserEngine> {
  const started = performance.now();
  progress('Loading DuckDB-wasm (about 35 MB, once per visit)…');
  const worker = new Worker(duckdbWorkerUrl);
  const db = new AsyncDuckDB(new VoidLogger(), worker);
  await Promise.all([db.instantiate(duckdbWasmUrl), initParquet({ module_or_path: parquetWasmUrl })]);
  const connection = await db.connect();
  // Autoloading would try to fetch an extension from the internet for some functions; fail fast instead.
  for (const setting of ['autoinstall_known_extensions', 'autoload_known_extensions']) await connection.query(`SET ${setting} = false`);
  progress(`DuckDB-wasm is ready (${((performance.now() - started) / 1000).toFixed(1)} s).`);
  const loaded = new Map<string, string>();
  // The sources of the latest load: their geometry columns tell the result which BLOBs are geometries.
  let current: readonly ConsoleSource[] = [];

  return {
    async load(sources, report) {
      const wanted = new Map(sources.map((source) => [source.alias.toLowerCase(), source]));
      for (const [alias] of loaded) {
        if (wanted.has(alias)) continue;
        await connection.query(`DROP TABLE IF EXISTS ${quoteIdentifier(alias)}`);
        loaded.delete(alias);
      }
      for (const [alias, source] of wanted) {
        if (loaded.get(alias) === source.version.url) continue;
        await loadSource(connection, source, report);
        loaded.set(alias, source.version.url);
      }
      current = sources;
    },
    run: (sql) => runBrowserQuery(connection, sql, current),
  };
}

async function loadSource(connection: AsyncDuckDBConnection, source: ConsoleSource, progress: (message: string) => void): Promise<void> {
  const { url, bytes } = source.version;
  progress(`Reading ${source.alias} (${bytes === null ? 'size unknown' : formatBytes(bytes)})…`);
  const started = performance.now();
  const response = await fetch(url).catch((error: unknown) => {
    throw new Error(`The file of ${source.alias} could not be downloaded from ${url} (${(error as Error).message}).`);
  });
  if (!response.ok) throw new Error(`${url} answered ${response.status}; the file of ${source.alias} could not be read.`);
  const file = new Uint8Array(await response.arrayBuffer());
  const stream = readParquet(file).intoIPCStream();
  await connection.query(`DROP TABLE IF EXISTS ${quoteIdentifier(source.alias)}`);
  await connection.insertArrowFromIPCStream(stream, { name: source.alias });
  progress(`Read ${source.alias} in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
}
