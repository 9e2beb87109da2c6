import { createServer } from '../server/app.ts';
import { createRandom } from './synthetic-catalog.ts';
import type { BenchContext } from './run.ts';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function timeRequests(fetch: (request: Request) => Response | Promise<Response>, urls: string[]): Promise<number[]> {
  const times: number[] = [];
  for (const url of urls) {
    const started = performance.now();
    const response = await fetch(new Request(url));
    await response.arrayBuffer();
    times.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  }
  return times.sort((a, b) => a - b);
}

/**
 * p50/p99 of computed listing answers (search plus tag filter, combinations that are not prebuilt) at 10k
 * datasets, through the server's fetch handler, beside static answers of the same server as the baseline.
 */
export async function benchListings(bench: BenchContext): Promise<void> {
  bench.section('Computed listing answers at 10,000 datasets');
  const synthetic = bench.kept('synthetic');
  const server = createServer({ config: synthetic });
  const fetch = (request: Request) => server.fetch(request);
  const index = server.snapshot().context.index;
  const random = createRandom(11);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const entries = [...index.collections.values()];
  const computed: string[] = [];
  const prebuilt: string[] = [];
  for (let round = 0; round < 3000; round++) {
    const entry = pick(entries);
    const words = entry.collection.datasets.slice(0, 50).flatMap((dataset) => dataset.name.split(' ')).filter((word) => /^[a-z]{4,}$/.test(word));
    const [key, values] = pick(Object.entries(entry.tags));
    const search = `${pick(words)}${random() < 0.5 ? ` ${pick(words).slice(0, 3)}` : ''}`;
    computed.push(`http://x/api/collections/${entry.collection.slug}?search=${encodeURIComponent(search)}&tag_filters=${encodeURIComponent(`${key}:${pick(values)}`)}&limit=${pick([10, 20, 50])}`);
    prebuilt.push(`http://x/api/collections/${entry.collection.slug}${random() < 0.5 ? '' : '?offset=50'}`);
  }
  await timeRequests(fetch, computed.slice(0, 300));
  const staticTimes = await timeRequests(fetch, prebuilt);
  const computedTimes = await timeRequests(fetch, computed);
  bench.report('computed listing (search + tag filter): p50', `${percentile(computedTimes, 0.5).toFixed(2)} ms`, `${computedTimes.length} requests`);
  bench.report('computed listing (search + tag filter): p99', `${percentile(computedTimes, 0.99).toFixed(2)} ms`, 'target ≤ 5 ms');
  bench.report('prebuilt listing page from memory: p50 / p99 (baseline)', `${percentile(staticTimes, 0.5).toFixed(2)} / ${percentile(staticTimes, 0.99).toFixed(2)} ms`, '');
  bench.report('computed / prebuilt, p99', `${(percentile(computedTimes, 0.99) / percentile(staticTimes, 0.99)).toFixed(1)}×`, '');
  await server.close();
}
