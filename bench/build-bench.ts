import { execFileSync } from 'node:child_process';
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
  bench.report('10k × 3: full build (cold caches, compression included)', `${(full.ms / 1000).toFixed(1)} s`, `${Math.round(full.result.documents / (full.ms / 1000))} documents/s, ${full.result.documents} documents (${countPages(full.result.written)} of them web pages); target ≤ 90 s with every page (issue 28): ${full.ms <= 90_000 ? 'met' : 'missed'}`);
  bench.report('10k × 3: dist size', `${(await treeBytes(synthetic.distDir) / 1e6).toFixed(0)} MB`, 'documents plus .br/.gz siblings');
  bench.report('10k × 3: build time / bare write of the same files', `${(full.ms / syntheticFloor).toFixed(1)}×`, `bare write ${(syntheticFloor / 1000).toFixed(1)} s`);

  const edited = join(catalogDir, 'datasets', 'collection-3', 'dataset-4243.yaml');
  const record = await readFile(edited, 'utf8');
  let edits = 0;
  const edit = () => writeFile(edited, record.replace('description: >-\n', `description: >-\n  Edited in round ${++edits}.\n`));
  // In process (the build alone), then as `npm run build` is run (a new process: modules loaded, caches read).
  const unchanged = { edits: false, inProcess: [] as number[], wall: [] as number[], written: [] as number[] };
  const oneEdit = { edits: true, inProcess: [] as number[], wall: [] as number[], written: [] as number[] };
  for (let round = 0; round < 3; round++) {
    for (const kind of [unchanged, oneEdit]) {
      if (kind.edits) await edit();
      const inProcess = await timedBuild(synthetic);
      kind.inProcess.push(inProcess.ms);
      kind.written.push(inProcess.result.written.length);
      if (kind.edits) await edit();
      kind.wall.push(wallBuild(bench.repo, synthetic));
    }
  }
  const seconds = (values: number[]) => values.map((ms) => (ms / 1000).toFixed(2)).join(', ');
  bench.report('10k × 3: rebuild with nothing changed, in process (3 rounds)', `${seconds(unchanged.inProcess)} s`, `${unchanged.written.join(', ')} files written`);
  bench.report('10k × 3: rebuild with nothing changed, npm run build (3 rounds)', `${seconds(unchanged.wall)} s`, `target ≤ 2.5 s: ${unchanged.wall.every((ms) => ms <= 2500) ? 'met' : 'missed'}`);
  bench.report('10k × 3: rebuild after editing one dataset, in process (3 rounds)', `${seconds(oneEdit.inProcess)} s`, `${oneEdit.written.join(', ')} files written; target ≤ 1.5 s: ${oneEdit.inProcess.every((ms) => ms <= 1500) ? 'met' : 'missed'}`);
  bench.report('10k × 3: rebuild after editing one dataset, npm run build (3 rounds)', `${seconds(oneEdit.wall)} s`, `target ≤ 3 s: ${oneEdit.wall.every((ms) => ms <= 3000) ? 'met' : 'missed'}`);
  await writeFile(edited, record);
  bench.keep('synthetic', synthetic);
}

/** The time of `npm run build` (the command it runs) on a bench catalog, process start and module loading included. */
function wallBuild(repo: string, config: Config): number {
  const env = {
    ...process.env,
    GEOSHELF_CATALOG_DIR: config.catalogDir,
    GEOSHELF_DATA_DIR: config.dataDir,
    GEOSHELF_DIST_DIR: config.distDir,
    GEOSHELF_CACHE_DIR: config.cacheDir,
    GEOSHELF_BASE_URL: config.baseUrl,
    CI: 'true',
  };
  const started = performance.now();
  execFileSync(process.execPath, [join(repo, 'cli', 'geoshelf.ts'), 'build'], { env, stdio: 'ignore' });
  return performance.now() - started;
}

function countPages(keys: string[]): number {
  return keys.filter((key) => key.endsWith('.html')).length;
}

/** Median of some numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
