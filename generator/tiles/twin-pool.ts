/**
 * Worker threads that make PMTiles twins side by side (generator/tiles/twin-worker.ts), under a memory budget:
 * a twin is started only when the memory it is estimated to take fits beside those running, and a twin too
 * large for the budget runs alone. A small file's twin takes memory in proportion to the file (a polygon is met by
 * many tiles); no twin's grows with its features (twin-stage.ts), though the archive writer keeps a few bytes per
 * tile (the 100M-point twin, 1.4M tiles, peaked at 1.16 GiB before the writer was made smaller).
 */
import { availableParallelism, totalmem } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { TwinFacts } from './pmtiles-twin.ts';

/** One twin to make: what `writePmTilesTwin` takes, less the DuckDB instance, which the thread has. */
export interface TwinJob {
  source: string;
  target: string;
  stamp: string;
  name: string;
}

/** What a thread answers: the twin's facts, or the first line of why it could not be made. */
export type TwinOutcome = { ok: true; facts: TwinFacts } | { ok: false; message: string; noGeometry: boolean };

/** What a thread says while it makes a twin: how far it is, 0–1 (staging the file, then each zoom). */
export interface TwinProgress {
  fraction: number;
}

/** Options of {@link createTwinPool}. */
export interface TwinPoolOptions {
  /** Threads at most; by default the machine's cores, at most 4. */
  threads?: number;
  /** Memory the twins being made may take together, in bytes; {@link defaultTwinBudget} by default. */
  budgetBytes?: number;
}

/**
 * Memory a twin is taken to need per byte of its GeoParquet file, above the most measured (one twin per process,
 * peak RSS less a process that has only loaded the tiler and opened its DuckDB, 135 MB): 81 for the sample's
 * 1:10m land polygons (2.9 MB), 75 and 67 for its countries and coastlines, 44 for its 135k cities, 8 for 1M
 * synthetic points. A small file's polygons are met by many tiles each, and DuckDB's share is about the same
 * whatever the file.
 */
export const TWIN_BYTES_PER_FILE_BYTE = 96;

/**
 * The most a twin takes whatever its file's size: DuckDB's limit (TWIN_DUCKDB_MEMORY, about twice that in RSS),
 * a bucket of tiles (BUCKET_BYTES), one tile and the thread; the peak RSS of the twins of 1M to 100M points is in
 * BENCHMARKS.md.
 */
export const TWIN_MAX_BYTES = 1024 ** 3;

/** The memory a twin of a GeoParquet file of `fileBytes` is taken to need. */
export function twinMemoryEstimate(fileBytes: number): number {
  return Math.min(fileBytes * TWIN_BYTES_PER_FILE_BYTE, TWIN_MAX_BYTES);
}

/** The default budget: a quarter of the machine's memory, at most 2 GiB. */
export function defaultTwinBudget(): number {
  return Math.min(2 * 1024 ** 3, Math.floor(totalmem() / 4));
}

/** A pool of twin threads; `close` ends them. */
export interface TwinPool {
  /** Makes one twin, once the budget has room for `fileBytes` of GeoParquet; `progress` hears how far it is (0–1). */
  make: (job: TwinJob, fileBytes: number, progress?: (fraction: number) => void) => Promise<TwinOutcome>;
  close: () => Promise<void>;
  /** The most twins made at once so far. */
  readonly peak: number;
}

interface Waiting {
  job: TwinJob;
  need: number;
  resolve: (outcome: TwinOutcome) => void;
  progress?: (fraction: number) => void;
}

/**
 * Starts no thread until the first twin; then at most `threads`, each making one twin at a time, started in the
 * order asked, while the estimated memory of those running fits `budgetBytes` (a twin larger than the budget
 * runs when nothing else does). A thread that dies (out of memory, say) fails its twin with why, and is replaced.
 * @example const pool = createTwinPool(); await pool.make(job, statSync(job.source).size); await pool.close();
 */
export function createTwinPool(options: TwinPoolOptions = {}): TwinPool {
  const budget = options.budgetBytes ?? defaultTwinBudget();
  const limit = Math.max(1, options.threads ?? Math.min(4, availableParallelism()));
  const idle: Worker[] = [];
  const busy = new Map<Worker, Waiting>();
  const waiting: Waiting[] = [];
  let inUse = 0;
  let closed = false;
  let peak = 0;
  const finish = (worker: Worker, outcome: TwinOutcome, reusable: boolean) => {
    const job = busy.get(worker);
    if (!job) return;
    busy.delete(worker);
    inUse -= job.need;
    if (reusable) idle.push(worker);
    job.resolve(outcome);
    next();
  };
  const spawn = () => {
    const worker = new Worker(new URL('./twin-worker.ts', import.meta.url));
    worker.on('message', (message: TwinOutcome | TwinProgress) => {
      if ('fraction' in message) busy.get(worker)?.progress?.(message.fraction);
      else finish(worker, message, true);
    });
    worker.on('error', (error) => finish(worker, { ok: false, message: `the tiler's thread failed: ${error.message}`, noGeometry: false }, false));
    worker.on('exit', (code) => {
      const at = idle.indexOf(worker);
      if (at >= 0) idle.splice(at, 1);
      finish(worker, { ok: false, message: `the tiler's thread stopped (exit code ${code})`, noGeometry: false }, false);
    });
    return worker;
  };
  const next = () => {
    while (!closed && waiting.length > 0 && busy.size < limit) {
      const head = waiting[0]!;
      if (busy.size > 0 && inUse + head.need > budget) return;
      waiting.shift();
      const worker = idle.pop() ?? spawn();
      busy.set(worker, head);
      inUse += head.need;
      peak = Math.max(peak, busy.size);
      worker.postMessage(head.job);
    }
  };
  return {
    make: (job, fileBytes, progress) => new Promise((resolve) => {
      if (closed) return resolve({ ok: false, message: 'the build stopped before this twin', noGeometry: false });
      waiting.push({ job, need: twinMemoryEstimate(fileBytes), resolve, ...(progress ? { progress } : {}) });
      next();
    }),
    close: async () => {
      closed = true;
      for (const job of waiting.splice(0)) job.resolve({ ok: false, message: 'the build stopped before this twin', noGeometry: false });
      const workers = [...idle.splice(0), ...busy.keys()];
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
    get peak() {
      return peak;
    },
  };
}
