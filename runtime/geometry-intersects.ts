/**
 * The exact test of STAC item search's `intersects`: which Items' footprints does a GeoJSON geometry meet? GEOS
 * answers it (the library PostGIS, GDAL, QGIS and shapely use; DESIGN.md decision 11) through `geos-wasm`, on one
 * worker thread (geometry-intersects-worker.ts), so checking and testing a geometry of 20,000 positions against
 * 30,000 footprints never holds the server's main thread: all it costs there is copying the parsed geometry into
 * a message (about 4 ms for 20,000 positions), since even JSON.stringify of it takes longer. The thread starts on the first `intersects` search and ends after a while without one, so a server
 * that is never asked `intersects` never loads GEOS's 2.5 MB of WebAssembly.
 */
import { Worker } from 'node:worker_threads';
import type { FootprintJob, FootprintVerdict } from './geometry-intersects-worker.ts';

/**
 * What a test answers: per entry whether the geometry meets its footprint, and the geometry's digest for page
 * tokens; or why it cannot be answered.
 */
export type FootprintTest = { ok: true; hits: Uint8Array; digest: string } | { ok: false; status: 400 | 503; detail: string };

/** Options of the worker thread; the defaults suit the server, tests shorten them. */
export interface FootprintTesterOptions {
  /** A job that runs longer is abandoned, its thread ended, and answered 503. */
  deadlineMs: number;
  /** Jobs waiting beyond this many are answered 503 at once: memory stays bounded under a flood. */
  maxQueued: number;
  /** The thread ends after this long without a job, giving its memory back. */
  idleMs: number;
}

/**
 * The thread ends 5 s after its last job: it holds about 30 MB (V8, zod, GEOS's WebAssembly), which a server asked
 * `intersects` once an hour should not keep. Starting it again costs the next search a few hundred ms, off the main
 * thread.
 */
const DEFAULTS: FootprintTesterOptions = { deadlineMs: 10_000, maxQueued: 32, idleMs: 5_000 };
/**
 * Heap limits of the thread: a geometry within the limits needs far less, and a thread that runs out of memory ends
 * alone (its search answered 503) rather than taking the server with it.
 */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 };

interface Pending {
  job: FootprintJob;
  resolve: (test: FootprintTest) => void;
}

const queue: Pending[] = [];
let worker: Worker | undefined;
let running: (Pending & { timer: NodeJS.Timeout }) | undefined;
let idleTimer: NodeJS.Timeout | undefined;
let nextId = 0;
let options = DEFAULTS;

/**
 * Tests a geometry against the footprint boxes of a search index (eight numbers per entry, NaN when absent) on the
 * worker thread, one job at a time, in order of arrival.
 * @example const test = await testFootprints(request.intersects, stacSearchIndex(index).boxes);
 */
export function testFootprints(geometry: unknown, boxes: Float64Array): Promise<FootprintTest> {
  if (queue.length >= options.maxQueued) {
    return Promise.resolve({ ok: false, status: 503, detail: `${queue.length} intersects searches are waiting for the geometry thread; try again shortly` });
  }
  return new Promise((resolve) => {
    queue.push({ job: { id: nextId++, geometry, boxes }, resolve });
    dispatch();
  });
}

/** Changes the thread's deadline, queue bound or idle time (tests), for the jobs that follow. */
export function configureFootprintTester(changes: Partial<FootprintTesterOptions>): void {
  options = { ...DEFAULTS, ...changes };
}

function dispatch(): void {
  if (running) return;
  const next = queue.shift();
  if (!next) {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(stopWorker, options.idleMs).unref();
    return;
  }
  clearTimeout(idleTimer);
  const thread = (worker ??= startWorker());
  const timer = setTimeout(() => {
    stopWorker();
    finish({ ok: false, status: 503, detail: `took longer than ${options.deadlineMs} ms to test and was stopped; simplify the geometry, or use a bbox` });
  }, options.deadlineMs).unref();
  running = { ...next, timer };
  thread.postMessage(next.job);
}

function finish(test: FootprintTest): void {
  const done = running;
  if (!done) return;
  running = undefined;
  clearTimeout(done.timer);
  done.resolve(test);
  dispatch();
}

function startWorker(): Worker {
  const thread = new Worker(new URL('./geometry-intersects-worker.ts', import.meta.url), { resourceLimits: RESOURCE_LIMITS });
  // The thread never keeps the process alive: a server that closes or a test that ends does not wait for it.
  thread.unref();
  thread.on('message', (verdict: FootprintVerdict | { id: number; error: string }) => {
    if (running?.job.id !== verdict.id) return;
    if ('error' in verdict) {
      console.error('the intersects thread failed on a geometry:', verdict.error);
      finish({ ok: false, status: 400, detail: 'could not be tested by GEOS; simplify it, or use a bbox' });
    } else finish(verdict.ok ? verdict : { ok: false, status: 400, detail: verdict.detail });
  });
  thread.on('error', (error) => {
    console.error('the intersects thread ended with an error:', error);
    if (worker === thread) worker = undefined;
    finish({ ok: false, status: 503, detail: 'could not be tested: the geometry thread stopped; try again' });
  });
  thread.on('exit', () => {
    if (worker === thread) worker = undefined;
  });
  return thread;
}

function stopWorker(): void {
  const thread = worker;
  worker = undefined;
  void thread?.terminate();
}
