import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { stacSearchIndex, searchStacItems } from '../core/api/stac/search.ts';
import { createServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';
import { createRandom } from './synthetic-catalog.ts';
import type { BenchContext } from './run.ts';

const REQUESTS = 1000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** Times `run` on each input, after a warm-up pass over the first tenth; sorted milliseconds. */
async function timeEach<T>(inputs: T[], run: (input: T) => unknown): Promise<number[]> {
  for (const input of inputs.slice(0, inputs.length / 10)) await run(input);
  const times: number[] = [];
  for (const input of inputs) {
    const started = performance.now();
    await run(input);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

/**
 * Times GET requests of `paths`, one at a time, from a separate Node process, so the client's own work and
 * garbage collection do not land in the server's figures; a warm-up pass over the first tenth is not timed.
 * Sorted milliseconds.
 */
async function timeFromClientProcess(origin: string, paths: string[]): Promise<number[]> {
  const client = `
    const [origin, ...paths] = JSON.parse(process.argv[1]);
    const get = async (path) => {
      const response = await fetch(origin + path);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(path + ' answered ' + response.status);
    };
    for (const path of paths.slice(0, paths.length / 10)) await get(path);
    const times = [];
    for (const path of paths) {
      const started = performance.now();
      await get(path);
      times.push(performance.now() - started);
    }
    process.stdout.write(JSON.stringify(times));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', client, JSON.stringify([origin, ...paths])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  const [code] = await once(child, 'close');
  if (code !== 0) throw new Error(`the client process exited with ${code}`);
  return (JSON.parse(output) as number[]).sort((a, b) => a - b);
}

/**
 * Boxes a client might search with: a point-sized box, a city, a country, a continent, and one across the
 * antimeridian, anywhere on the world (seeded, so every run asks the same).
 */
function makeBoxes(count: number): string[] {
  const random = createRandom(23);
  const sizes = [0.01, 1, 10, 60];
  return Array.from({ length: count }, (_, index) => {
    if (index % 10 === 9) return `${170 + random() * 9},${-40 + random() * 40},${-179 + random() * 9},${random() * 40}`;
    const size = sizes[index % sizes.length]!;
    const west = -180 + random() * (360 - size);
    const south = -90 + random() * (180 - size);
    return [west, south, west + size, south + size].map((value) => value.toFixed(4)).join(',');
  });
}

/**
 * STAC item search with a bbox over the 10k-dataset synthetic catalog (30,000 Items): p50/p99 through a real HTTP
 * socket, through the app's fetch handler, and of the search alone in process, beside a prebuilt static answer
 * of the same server as the baseline. Target: p99 ≤ 10 ms.
 */
export async function benchStacSearch(bench: BenchContext): Promise<void> {
  bench.section('STAC item search at 10,000 datasets × 3 files');
  const server = createServer({ config: bench.kept('synthetic') });
  const index = server.snapshot().context.index;
  const started = performance.now();
  const search = stacSearchIndex(index);
  bench.report('search index: build, once per snapshot', `${(performance.now() - started).toFixed(0)} ms`, `${search.entries.length} Items`);

  const boxes = makeBoxes(REQUESTS);
  const searchUrls = boxes.map((box) => `/stac/api/search?bbox=${box}`);
  const listed = [...index.collections.keys()];
  const staticUrls = boxes.map((_, round) => `/api/collections/${listed[round % listed.length]}`);
  const http = await listen(server, { port: 0, hostname: '127.0.0.1' });
  const origin = new URL(http.url!).origin;
  const viaApp = async (path: string) => {
    const response = await server.fetch(new Request(`http://x${path}`));
    await response.arrayBuffer();
  };
  try {
    const coreTimes = await timeEach(boxes, (box) => searchStacItems(index, { bbox: box.split(',').map(Number) as [number, number, number, number] }));
    const appTimes = await timeEach(searchUrls, viaApp);
    const socketTimes = await timeFromClientProcess(origin, searchUrls);
    const staticTimes = await timeFromClientProcess(origin, staticUrls);
    let matched = 0;
    for (const box of boxes) matched += searchStacItems(index, { bbox: box.split(',').map(Number) as [number, number, number, number] }).length;
    const figures = (times: number[]) => `${percentile(times, 0.5).toFixed(2)} / ${percentile(times, 0.99).toFixed(2)} ms`;
    bench.report('bbox search over HTTP (a client process, first page of 10 Items): p50 / p99', figures(socketTimes), `${REQUESTS} requests, ${Math.round(matched / REQUESTS)} Items matched on average; target p99 ≤ 10 ms`);
    bench.report('bbox search through the app fetch handler: p50 / p99', figures(appTimes), 'parse, search, render 10 Items, hash and serialise; no socket');
    bench.report('bbox search alone in process: p50 / p99', figures(coreTimes), 'searchStacItems over 30,000 entries, every match counted');
    bench.report('prebuilt listing over HTTP: p50 / p99 (baseline)', figures(staticTimes), 'a static answer of the same server, same client');
    bench.report('STAC search / prebuilt answer, p99', `${(percentile(socketTimes, 0.99) / percentile(staticTimes, 0.99)).toFixed(1)}×`, '');
  } finally {
    await http.close(true);
    await server.close();
  }
}
