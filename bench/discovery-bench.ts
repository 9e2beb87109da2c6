import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createCatalogIndex } from '../core/catalog-index.ts';
import { createRenderContext } from '../core/api/catalog/answer.ts';
import { describeVersionChanges } from '../core/api/catalog/version-changes.ts';
import { describeCatalogJsonLd, describeDatasetJsonLd, serializeJsonLd } from '../core/site/json-ld.ts';
import type { TreeFile } from '../core/static-files.ts';
import { CATALOG_FILES, COMPRESS_MIN_BYTES, PARQUET_TYPE } from '../core/constants.ts';
import { buildCatalog, COMPRESSION } from '../generator/build.ts';
import { compressBody, type CompressResult } from '../generator/emit/compress.ts';
import { renderCatalogFeed, renderCollectionFeed } from '../generator/emit/discovery/atom-feed.ts';
import { renderDcatCollectionFile, renderDcatFile } from '../generator/emit/discovery/dcat.ts';
import { renderCatalogDownloads } from '../generator/emit/downloads.ts';
import { renderCollectionSitemaps, renderPagesSitemap, renderRobotsTxt, renderSitemapIndex } from '../generator/emit/site/sitemaps.ts';
import { readManifest, type Manifest } from '../runtime/manifest.ts';
import { readModel } from '../runtime/model-file.ts';
import { benchConfig } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticCatalog } from './synthetic-catalog.ts';

/**
 * What issue 29's outputs cost a full build of the 10k × 3 synthetic catalog: the sitemaps, the DCAT documents, the
 * Atom feeds, the JSON-LD of every dataset page and the home page, each file's version changes and the two Parquet
 * downloads, rendered from the built model in this process, then compressed and written as the build does. The
 * full build of the same catalog in this run is the baseline (target: at most 10% of it). Also the size of the
 * stac-geoparquet download per Item against the STAC JSON tree's.
 */
export async function benchDiscovery(bench: BenchContext): Promise<void> {
  bench.section('Discovery outputs at 10,000 datasets × 3 files (issue 29)');
  const root = join(bench.root, 'discovery');
  const catalogDir = join(root, 'catalog');
  await writeSyntheticCatalog({ dir: catalogDir, datasets: 10_000, filesPerDataset: 3, collections: 20, sampleCatalogDir: join(bench.repo, 'catalog-data') });
  const config = benchConfig(root, catalogDir, join(bench.repo, 'catalog-data', 'data'));
  const started = performance.now();
  await buildCatalog({ config });
  const fullMs = performance.now() - started;
  bench.report('10k × 3: full build (cold caches), the baseline', `${(fullMs / 1000).toFixed(1)} s`, 'every output of issue 29 included');

  const { model } = readModel(config.distDir).file;
  const context = createRenderContext(createCatalogIndex(model, { baseUrl: config.baseUrl, storageBaseUrl: config.storageBaseUrl }));
  const rounds: Record<string, number[]> = {};
  let oneEdit: number[] | undefined;
  for (let round = 0; round < 3; round++) {
    const files: TreeFile[] = [];
    const bytes: Record<string, number> = {};
    const timed = async (name: string, run: () => TreeFile[] | Promise<TreeFile[]>) => {
      const begun = performance.now();
      const made = await run();
      (rounds[name] ??= []).push(performance.now() - begun);
      files.push(...made);
      if (made.length > 0) bytes[name] = made.reduce((sum, file) => sum + file.body.length, 0);
    };
    await timed('sitemaps and robots.txt', () => [...model.collections.flatMap((collection) => renderCollectionSitemaps(config.baseUrl, collection)), renderSitemapIndex(context.index), renderPagesSitemap(context.index), renderRobotsTxt(config.baseUrl)]);
    await timed('DCAT documents', () => [renderDcatFile(context), ...model.collections.map((collection) => renderDcatCollectionFile(context, collection))]);
    await timed('Atom feeds', () => [renderCatalogFeed(context), ...model.collections.map((collection) => renderCollectionFeed(context, collection))]);
    await timed('JSON-LD of the pages', () => [
      jsonLdFile('index', serializeJsonLd(describeCatalogJsonLd(context.index))),
      ...model.collections.flatMap((collection) => collection.datasets.map((dataset) => jsonLdFile(`${dataset.id}`, serializeJsonLd(describeDatasetJsonLd(context, collection, dataset))))),
    ]);
    await timed('version changes of every file', () => {
      for (const collection of model.collections) for (const dataset of collection.datasets) for (const file of dataset.files) describeVersionChanges(file, context.index);
      return [];
    });
    await timed('the two Parquet downloads, every collection\'s part made', () => renderCatalogDownloads(context));
    const parts = { dir: join(root, 'parts'), keys: new Map(model.collections.map((collection) => [collection.slug, collection.slug])) };
    await renderCatalogDownloads(context, parts);
    parts.keys.set(model.collections[0]!.slug, `edited-${round}`);
    const begun = performance.now();
    await renderCatalogDownloads(context, parts);
    (oneEdit ??= []).push(performance.now() - begun);
    const siblings = new Map<string, CompressResult>();
    await timed('compressing what they add (brotli and gzip, as the build)', () => {
      for (const file of files) if (file.body.length >= COMPRESS_MIN_BYTES && file.type !== PARQUET_TYPE) siblings.set(file.key, compressBody(file.body, COMPRESSION));
      return [];
    });
    const out = join(root, 'written');
    // The JSON-LD is inside the pages, which the build writes anyway: its bytes are compressed above, not written as files.
    await timed('writing them with their .br and .gz siblings', async () => {
      for (const file of files.filter((candidate) => !candidate.key.startsWith(JSON_LD_PREFIX))) {
        const path = join(out, file.key);
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, file.body);
        const sibling = siblings.get(file.key);
        if (sibling) await Promise.all([writeFile(`${path}.br`, sibling.br), writeFile(`${path}.gz`, sibling.gz)]);
      }
      return [];
    });
    await rm(out, { recursive: true, force: true });
    if (round === 0) bench.report('10k × 3: what they add', Object.entries(bytes).map(([name, size]) => `${name} ${(size / 1e6).toFixed(1)} MB`).join('; '), 'uncompressed; the JSON-LD is inside the pages');
  }
  bench.report('10k × 3: the two Parquet downloads after an edit of one collection (3 rounds)', oneEdit!.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', '), 'the other collections\' parts kept in the cache, as a rebuild keeps them; not in the sum below');
  const totals = [0, 1, 2].map((round) => Object.values(rounds).reduce((sum, times) => sum + times[round]!, 0));
  for (const [name, times] of Object.entries(rounds)) bench.report(`10k × 3: ${name} (3 rounds)`, times.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', '), '');
  bench.report('10k × 3: all of issue 29 / the full build (3 rounds)', totals.map((ms) => `${((ms / fullMs) * 100).toFixed(1)}%`).join(', '), `${totals.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s; target ≤ 10%: ${totals.every((ms) => ms <= fullMs * 0.1) ? 'met' : 'missed'}; against a 90 s build (issue 28's target) ${totals.map((ms) => `${((ms / 90_000) * 100).toFixed(1)}%`).join(', ')}`);

  reportDumpSize(bench, '10k × 3', (await readManifest(config.distDir))!);
  // The synthetic Items repeat three files' dictionaries 10,000 times, which Parquet's dictionary encoding folds away:
  // the sample's 25 Items, each of a file of its own, say what a catalog of distinct files gets.
  const sample = benchConfig(join(root, 'sample'), join(bench.repo, 'catalog-data'), join(bench.repo, 'catalog-data', 'data'));
  await buildCatalog({ config: sample });
  reportDumpSize(bench, 'sample', (await readManifest(sample.distDir))!);
  await rm(root, { recursive: true, force: true });
}

function reportDumpSize(bench: BenchContext, label: string, manifest: Manifest): void {
  const items = Object.entries(manifest.files).filter(([key, entry]) => key.startsWith('stac/') && entry.type === 'application/geo+json' && !key.includes('/versions/'));
  const json = items.reduce((sum, [, entry]) => sum + entry.bytes, 0);
  const jsonBrotli = items.reduce((sum, [, entry]) => sum + (entry.br ?? entry.bytes), 0);
  const dump = manifest.files[CATALOG_FILES.stacItems]!.bytes;
  bench.report(`${label}: stac-geoparquet download per Item`, `${(dump / items.length).toFixed(0)} B`, `${(dump / 1e3).toFixed(1)} kB for ${items.length} Items`);
  bench.report(`${label}: STAC JSON per Item (whole / brotli sibling)`, `${(json / items.length).toFixed(0)} B / ${(jsonBrotli / items.length).toFixed(0)} B`, `the download is ${(json / dump).toFixed(1)}× smaller than the JSON Items, ${(jsonBrotli / dump).toFixed(1)}× smaller than their brotli siblings`);
}

const JSON_LD_PREFIX = 'json-ld/';

function jsonLdFile(key: string, text: string): TreeFile {
  return { key: `${JSON_LD_PREFIX}${key}.json`, body: new TextEncoder().encode(text), type: 'application/ld+json' };
}
