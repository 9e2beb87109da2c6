import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCatalogIndex } from '../core/catalog-index.ts';
import { createRenderContext } from '../core/api/catalog/answer.ts';
import { compileSite } from '../generator/emit/site/compile-site.ts';
import { listDatasetPages } from '../generator/emit/site/site-pages.ts';
import { loadCatalogModel } from '../generator/build.ts';
import type { PageView } from '../src/view-types.ts';
import type { BenchContext } from './run.ts';

/** Pages rendered by each engine; enough for a steady rate, small enough for Astro's build to finish soon. */
const PAGES = 3000;

/**
 * Astro's own static build against rendering the same views from the generator with Astro's container API:
 * the same dataset and file pages of the sample, repeated under distinct paths, rendered both ways.
 */
export async function benchSite(bench: BenchContext): Promise<void> {
  bench.section('Web app pages');
  const config = bench.kept('sample');
  const { model } = await loadCatalogModel({ config });
  const index = createCatalogIndex(model, { baseUrl: config.baseUrl, storageBaseUrl: config.storageBaseUrl });
  const context = createRenderContext(index);
  const jobs = model.collections.flatMap((collection) => collection.datasets.flatMap((dataset) => listDatasetPages(context, collection, dataset, { queryOrigin: '' })));
  const pages = Array.from({ length: PAGES }, (_, position) => jobs[position % jobs.length]!.page);

  const compileStarted = performance.now();
  // A fresh folder inside the repository (the compiled views import `astro`, which Node resolves from where
  // they are), so the compile is measured cold.
  const cacheDir = join(bench.repo, 'node_modules', '.cache', 'geoshelf-site-bench');
  await rm(cacheDir, { recursive: true, force: true });
  const compiled = await compileSite({ root: bench.repo, cacheDir });
  const compileMs = performance.now() - compileStarted;
  const containerStarted = performance.now();
  for (const page of pages) await compiled.renderer.render(page);
  const containerMs = performance.now() - containerStarted;

  const astroMs = await timeAstroBuild(bench, pages);
  await rm(cacheDir, { recursive: true, force: true });
  bench.report('compile the web app (Vite: client bundles + Astro views for Node)', `${(compileMs / 1000).toFixed(1)} s`, 'cold; once per change of the site\'s sources, cached by their hash');
  bench.report(`container API: ${PAGES} dataset and file pages`, `${Math.round(PAGES / (containerMs / 1000))} pages/s`, `${(containerMs / 1000).toFixed(2)} s; the generator renders only the pages whose documents changed`);
  bench.report(`astro build: the same ${PAGES} pages`, `${Math.round(PAGES / (astroMs / 1000))} pages/s`, `${(astroMs / 1000).toFixed(2)} s; regenerates every page on every build`);
  bench.report('astro build time / container render time', `${(astroMs / containerMs).toFixed(1)}×`, 'same views, same props');
}

/** Builds a throwaway Astro project whose one dynamic route renders `pages` with the same view components. */
async function timeAstroBuild(bench: BenchContext, pages: PageView[]): Promise<number> {
  // Inside the repository, so that the project resolves `astro` from its node_modules.
  const root = join(bench.repo, 'node_modules', '.cache', 'geoshelf-astro-bench');
  await rm(root, { recursive: true, force: true });
  await mkdir(join(root, 'src', 'pages', 'p'), { recursive: true });
  await writeFile(join(root, 'pages.json'), JSON.stringify(pages));
  const views = join(bench.repo, 'src');
  await writeFile(
    join(root, 'src', 'pages', 'p', '[n].astro'),
    `---
import { readFileSync } from 'node:fs';
import DatasetPage from '${views}/views/DatasetPage.astro';
import FilePage from '${views}/views/FilePage.astro';
import { setSiteAssets } from '${views}/site-assets.ts';
export function getStaticPaths() {
  const pages = JSON.parse(readFileSync(${JSON.stringify(join(root, 'pages.json'))}, 'utf8'));
  return pages.map((page, n) => ({ params: { n: String(n) }, props: page }));
}
setSiteAssets({ css: '/s.css', 'file-page': '/f.js' });
const { view, props } = Astro.props;
---
{view === 'dataset' ? <DatasetPage {...props} /> : <FilePage {...props} />}
`,
  );
  const { build } = await import('astro');
  const started = performance.now();
  await build({ root, outDir: join(root, 'dist'), logLevel: 'error', vite: { logLevel: 'error' } });
  const elapsed = performance.now() - started;
  const written = (await readdir(join(root, 'dist', 'p'))).length;
  await rm(root, { recursive: true, force: true });
  if (written !== pages.length) throw new Error(`astro build wrote ${written} pages, expected ${pages.length}`);
  return elapsed;
}
