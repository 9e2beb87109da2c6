/**
 * `npm run bench -- writers`: whether the build's tree writer should write from one thread or two. The same files
 * as a catalog tree has them (a folder per document: `index.json` with its `.br` and `.gz` siblings) are written
 * with `mkdirSync` and `writeFileSync`, as `generator/emit/write-tree.ts` writes them, once by the main thread
 * alone and once by two worker threads taking half of the folders each, in a random order in each of 3 rounds.
 * Each round writes into a new folder, removed untimed afterwards, and each side starts after a `sync`. Run it
 * on an otherwise idle disk: writeback of another process's files throttles whichever side meets it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { BenchContext } from './run.ts';

const ROUNDS = 3;
const FOLDERS = 20_000;
/** Sizes of a dataset document of the 10k tree and its siblings, in bytes (about its median). */
const SIZES = { 'index.json': 6_000, 'index.json.br': 1_300, 'index.json.gz': 1_600 };

/** Writes folders [from, to) under `root` and returns the milliseconds it took. */
function writeFolders(root: string, from: number, to: number): number {
  const bodies = Object.entries(SIZES).map(([name, bytes]) => [name, Buffer.alloc(bytes, 120)] as const);
  const started = performance.now();
  for (let folder = from; folder < to; folder++) {
    // Two levels, as collections/{c}/datasets/{d}: 200 folders of 100.
    const directory = join(root, `c${Math.floor(folder / 100)}`, `d${folder % 100}`);
    mkdirSync(directory, { recursive: true });
    for (const [name, body] of bodies) writeFileSync(join(directory, name), body);
  }
  return performance.now() - started;
}

// This module is also each writer thread: it writes its half when told to start.
if (!isMainThread && (workerData as { writers?: boolean } | null)?.writers) {
  const { root, from, to } = workerData as { root: string; from: number; to: number };
  parentPort!.once('message', () => {
    writeFolders(root, from, to);
    parentPort!.postMessage('done');
  });
}

/** Two threads, each writing half of the folders; milliseconds from the start signal to the last one's end. */
async function writeWithTwoThreads(root: string): Promise<number> {
  const halves = [[0, FOLDERS / 2], [FOLDERS / 2, FOLDERS]] as const;
  const workers = halves.map(([from, to]) => new Worker(new URL(import.meta.url), { workerData: { writers: true, root, from, to } }));
  await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('online', resolve))));
  const started = performance.now();
  await Promise.all(workers.map((worker) => {
    const done = new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    worker.postMessage('go');
    return done;
  }));
  const ms = performance.now() - started;
  await Promise.all(workers.map((worker) => worker.terminate()));
  return ms;
}

export async function benchWriteThreads(bench: Pick<BenchContext, 'root' | 'section' | 'report'>): Promise<void> {
  bench.section('The tree writer: one thread against two');
  const files = FOLDERS * Object.keys(SIZES).length;
  let met = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const order = Math.random() < 0.5 ? (['one', 'two'] as const) : (['two', 'one'] as const);
    const ms: Record<'one' | 'two', number> = { one: 0, two: 0 };
    for (const side of order) {
      const root = join(bench.root, `writers-${round}-${side}`);
      // Each side starts with no dirty pages of the other's waiting to be written back (untimed).
      execFileSync('sync');
      ms[side] = side === 'one' ? writeFolders(root, 0, FOLDERS) : await writeWithTwoThreads(root);
      rmSync(root, { recursive: true, force: true });
    }
    if (ms.two < ms.one) met++;
    const perFile = (value: number) => `${((value * 1000) / files).toFixed(0)} µs a file`;
    bench.report(`round ${round}: two threads / one`, `${(ms.two / ms.one).toFixed(2)}×`,
      `one thread ${(ms.one / 1000).toFixed(2)} s (${perFile(ms.one)}), two ${(ms.two / 1000).toFixed(2)} s (${perFile(ms.two)}); ${files.toLocaleString('en')} files in ${FOLDERS.toLocaleString('en')} folders; ${order.join(' first, then ')}`);
  }
  bench.report('two threads faster', `${met} of ${ROUNDS} rounds`, 'a second writer is worth it only if it wins every round');
}
