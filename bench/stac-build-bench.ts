import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCatalog } from '../generator/build.ts';
import { readManifest } from '../runtime/manifest.ts';
import type { Config } from '../runtime/config.ts';
import { benchConfig } from './build-bench.ts';
import type { BenchContext } from './run.ts';

/**
 * What the static STAC tree costs a full build of the synthetic catalog (10,000 datasets, 30,000 files): the
 * same catalog built twice from cold caches into fresh folders in this run, without the tree and with it.
 * Target (issue 11): the tree adds at most 30% to the full build time.
 */
export async function benchStacBuild(bench: BenchContext): Promise<void> {
  bench.section('Static STAC tree');
  const synthetic = bench.kept('synthetic');
  const root = join(bench.root, 'stac-build');
  const without = await timedFullBuild(benchConfig(root, synthetic.catalogDir, synthetic.dataDir, 'without-stac'), true);
  const withStac = await timedFullBuild(benchConfig(root, synthetic.catalogDir, synthetic.dataDir, 'with-stac'), false);
  await rm(root, { recursive: true, force: true });
  bench.report('10k × 3: full build without the STAC tree', `${(without.ms / 1000).toFixed(1)} s`, `${without.documents} documents`);
  bench.report('10k × 3: full build with the STAC tree', `${(withStac.ms / 1000).toFixed(1)} s`, `${withStac.documents} documents, ${withStac.stacFiles} of them STAC (${(withStac.stacBytes / 1e6).toFixed(0)} MB uncompressed)`);
  bench.report('10k × 3: build time with / without the STAC tree', `${(withStac.ms / without.ms).toFixed(2)}×`, 'target ≤ 1.30×');
}

async function timedFullBuild(config: Config, skipStac: boolean): Promise<{ ms: number; documents: number; stacFiles: number; stacBytes: number }> {
  const started = performance.now();
  const result = await buildCatalog({ config, skipStac });
  const ms = performance.now() - started;
  const stac = Object.entries((await readManifest(config.distDir))!.files).filter(([key]) => key.startsWith('stac/'));
  await rm(config.distDir, { recursive: true, force: true });
  return { ms, documents: result.documents, stacFiles: stac.length, stacBytes: stac.reduce((sum, [, entry]) => sum + entry.bytes, 0) };
}
