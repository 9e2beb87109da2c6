import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { loadConfig, type Config } from '../runtime/config.ts';
import { readManifest } from '../runtime/manifest.ts';
import { buildCatalog, type BuildResult } from '../generator/build.ts';
import { writeSyntheticCatalog } from './synthetic-catalog.ts';
import type { BenchContext } from './run.ts';

/** Settings of a bench build in `root`, with its own dist and cache folders. */
export function benchConfig(root: string, catalogDir: string, dataDir: string, name = 'dist'): Config {
  return loadConfig({}, { catalogDir, dataDir, distDir: join(root, name), cacheDir: join(root, `${name}-cache`), baseUrl: 'https://catalog.example.org', ci: 'true' });
}

async function treeBytes(distDir: string): Promise<number> {
  const manifest = (await readManifest(distDir))!;
  return Object.values(manifest.files).reduce((sum, entry) => sum + entry.bytes + (entry.br ?? 0) + (entry.gz ?? 0), 0);
}

/**
 * The floor a build cannot beat on this disk: the same files (documents and siblings, same sizes) written by a
 * bare loop of mkdir + writeFileSync, with no rendering or compression.
 */
async function measureWriteFloor(distDir: string, target: string): Promise<number> {
  const manifest = (await readManifest(distDir))!;
  const started = performance.now();
  const made = new Set<string>();
  for (const [key, entry] of Object.entries(manifest.files)) {
    const path = join(target, key);
    if (!made.has(dirname(path))) {
      mkdirSync(dirname(path), { recursive: true });
      made.add(dirname(path));
    }
    writeFileSync(path, Buffer.alloc(entry.bytes));
    if (entry.br !== undefined) writeFileSync(`${path}.br`, Buffer.alloc(entry.br));
    if (entry.gz !== undefined) writeFileSync(`${path}.gz`, Buffer.alloc(entry.gz));
  }
  return performance.now() - started;
}

async function timedBuild(config: Config): Promise<{ ms: number; result: BuildResult }> {
  const started = performance.now();
  const result = await buildCatalog({ config });
  return { ms: performance.now() - started, result };
}

/** Sections that read the 10k-dataset synthetic catalog; a run of none of them skips building it (minutes on 2 cores). */
const SYNTHETIC_READERS = ['builds', 'listings', 'compression', 'build-load', 'stac-build', 'stac-search', 'publish'];

/** Build throughput and tree size of the sample and of the synthetic catalog, and the incremental rebuild time. */
export async function benchBuilds(bench: BenchContext): Promise<void> {
  bench.section('Builds');
  const sample = benchConfig(bench.root, join(bench.repo, 'catalog-data'), join(bench.repo, 'catalog-data', 'data'), 'sample-dist');
  const cold = await timedBuild(sample);
  bench.keep('sample', sample);
  const floor = await measureWriteFloor(sample.distDir, join(bench.root, 'sample-floor'));
  bench.report('sample: full build (cold caches)', `${(cold.ms / 1000).toFixed(2)} s`, `${Math.round(cold.result.documents / (cold.ms / 1000))} documents/s, ${cold.result.documents} documents`);
  bench.report('sample: dist size', `${(await treeBytes(sample.distDir) / 1e6).toFixed(1)} MB`, 'documents plus .br/.gz siblings');
  bench.report('sample: build time / bare write of the same files', `${(cold.ms / floor).toFixed(1)}×`, `bare write ${floor.toFixed(0)} ms`);
  if (!SYNTHETIC_READERS.some((section) => bench.wants(section))) return;

  const catalogDir = join(bench.root, 'synthetic', 'catalog');
  await writeSyntheticCatalog({ dir: catalogDir, datasets: 10_000, filesPerDataset: 3, collections: 20, sampleCatalogDir: join(bench.repo, 'catalog-data') });
  const synthetic = benchConfig(join(bench.root, 'synthetic'), catalogDir, join(bench.repo, 'catalog-data', 'data'));
  const full = await timedBuild(synthetic);
  const syntheticFloor = await measureWriteFloor(synthetic.distDir, join(bench.root, 'synthetic', 'floor'));
  await rm(join(bench.root, 'synthetic', 'floor'), { recursive: true, force: true });
  bench.report('10k × 3: full build (cold caches, compression included)', `${(full.ms / 1000).toFixed(1)} s`, `${Math.round(full.result.documents / (full.ms / 1000))} documents/s, ${full.result.documents} documents (${countPages(full.result.written)} of them web pages); target ≤ 120 s with every page`);
  bench.report('10k × 3: dist size', `${(await treeBytes(synthetic.distDir) / 1e6).toFixed(0)} MB`, 'documents plus .br/.gz siblings');
  bench.report('10k × 3: build time / bare write of the same files', `${(full.ms / syntheticFloor).toFixed(1)}×`, `bare write ${(syntheticFloor / 1000).toFixed(1)} s`);

  const unchanged = await timedBuild(synthetic);
  bench.report('10k × 3: rebuild with nothing changed', `${(unchanged.ms / 1000).toFixed(2)} s`, `${unchanged.result.written.length} files written`);
  const edited = join(catalogDir, 'datasets', 'collection-3', 'dataset-4243.yaml');
  const record = await readFile(edited, 'utf8');
  const times: number[] = [];
  for (let round = 0; round < 3; round++) {
    await writeFile(edited, record.replace('description: >-\n', `description: >-\n  Edited in round ${round}.\n`));
    const incremental = await timedBuild(synthetic);
    times.push(incremental.ms);
    if (round === 2) bench.report('10k × 3: rebuild after editing one dataset (median of 3)', `${(median(times) / 1000).toFixed(2)} s`, `${incremental.result.written.length} files written, ${countPages(incremental.result.written)} of them pages; target ≤ 5 s, pages included`);
  }
  bench.keep('synthetic', synthetic);
}

function countPages(keys: string[]): number {
  return keys.filter((key) => key.endsWith('.html')).length;
}

/** Median of some numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
