/**
 * STAC free-text search (`q`) over a synthetic catalog's model, in a process of its own, for
 * `npm run bench -- stac-q-scale`: loads the catalog as a build does, builds the server's catalog and STAC
 * indexes, and times 1,000 searches of one to three terms of one to three words (a tenth of them prefixes)
 * after 100 untimed ones. Prints one JSON line.
 * @example node --max-old-space-size=16000 bench/stac-q-child.ts /tmp/catalog 100000
 */
import { join } from 'node:path';
import { loadCatalogModel } from '../generator/build.ts';
import { createCatalogIndex } from '../core/catalog-index.ts';
import { searchStacItems, stacSearchIndex, stacTextIndex } from '../core/api/stac/search.ts';
import { benchConfig } from './build-bench.ts';
import { createRandom, WORDS } from './synthetic-catalog.ts';

const [catalogDir, dataDir] = process.argv.slice(2) as [string, string];
let started = performance.now();
const { model } = await loadCatalogModel({ config: benchConfig(join(catalogDir, '..'), catalogDir, dataDir) });
const loadMs = performance.now() - started;
started = performance.now();
const index = createCatalogIndex(model, { baseUrl: 'https://catalog.example.org', storageBaseUrl: 'https://catalog.example.org/data' });
const search = stacSearchIndex(index);
stacTextIndex(index, search);
const indexMs = performance.now() - started;
const random = createRandom(5);
const word = () => {
  const whole = WORDS[Math.floor(random() * WORDS.length)]!.toLowerCase();
  return random() < 0.1 ? whole.slice(0, 2 + Math.floor(random() * (whole.length - 1))) : whole;
};
const queries = Array.from({ length: 1100 }, (_, k) => Array.from({ length: 1 + (k % 3) }, () => Array.from({ length: 1 + ((k >> 2) % 3) }, word)));
for (const q of queries.slice(0, 100)) searchStacItems(index, { q });
const times: number[] = [];
let matched = 0;
for (const q of queries.slice(100)) {
  const at = performance.now();
  matched += searchStacItems(index, { q }).length;
  times.push(performance.now() - at);
}
times.sort((a, b) => a - b);
const percentile = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))]!;
console.log(JSON.stringify({
  items: search.entries.length, loadMs, indexMs, p50: percentile(0.5), p90: percentile(0.9), p99: percentile(0.99), max: times.at(-1),
  matched: Math.round(matched / times.length), rssBytes: process.memoryUsage().rss,
}));
