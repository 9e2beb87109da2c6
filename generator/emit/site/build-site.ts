import { join } from 'node:path';
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { createRenderContext } from '../../../core/api/catalog/answer.ts';
import type { TreeFile } from '../../../core/static-files.ts';
import type { SiteScopes } from '../render-tree.ts';
import { MAP_PICTURE_FILE } from '../../../src/map-picture-size.ts';
import { readFileMapFacts } from '../../../src/file-map.ts';
import { compileSite } from './compile-site.ts';
import { drawMapPicture, readBasemap, type Basemap } from './map-picture.ts';
import { contentTypeOf } from './content-types.ts';
import { buildSearchIndex, digestSearchRecords } from './search-index.ts';
import { listSearchRecords, renderQuerySources } from './site-data.ts';
import { listCollectionPages, listDatasetPages, listGlobalPages, type PageJob, type SitePageSettings } from './site-pages.ts';
import { renderCollectionSitemaps, renderPagesSitemap, renderRobotsTxt, renderSitemapIndex } from './sitemaps.ts';

/** The web app's part of a build: scope hooks for `renderTree`, and a fingerprint. */
export interface SiteBuild {
  scopes: SiteScopes;
  /** Changes whenever a page could render differently for the same catalog. */
  fingerprint: string;
  /** Pages rendered so far, for progress output. */
  rendered: () => number;
}

/** Options of `prepareSite`. */
export interface PrepareSiteOptions extends SitePageSettings {
  /** The repository root: where `src/` and `public/` are. */
  root: string;
  /**
   * The local data folder, where the build's PMTiles twins are: a file page's map picture draws the features of its
   * twin from there. Without it, pictures show the extent alone.
   */
  dataDir?: string;
  /** The hash of the web app's sources, when the caller has it (`hashSources`). */
  sourceHash?: string;
  log?: (line: string) => void;
}

/**
 * Compiles the web app and returns the hooks that put its pages into the same scopes as the JSON documents they
 * show, so an edited dataset renders its own pages again and nothing else.
 */
export async function prepareSite(index: CatalogIndex, options: PrepareSiteOptions): Promise<SiteBuild> {
  const compiled = await compileSite({ root: options.root, cacheDir: join(options.root, 'node_modules', '.cache', 'geoshelf-site'), ...(options.sourceHash ? { sourceHash: options.sourceHash } : {}), ...(options.log ? { log: options.log } : {}) });
  const context = createRenderContext(index);
  const settings: SitePageSettings = { queryOrigin: options.queryOrigin, browserSqlLimitBytes: options.browserSqlLimitBytes };
  let count = 0;
  let reported = performance.now();
  // Pages are listed only when rendered, so a large catalog never holds every page's documents at once.
  const render = (list: () => PageJob[]) => () => renderJobs(list());
  const renderJobs = async (jobs: PageJob[]) => {
    const files: TreeFile[] = [];
    for (const job of jobs) {
      files.push({ key: job.key, body: encoder.encode(await compiled.renderer.render(job.page)), type: HTML });
      count += 1;
      if (options.log && performance.now() - reported > 2000) {
        reported = performance.now();
        options.log(`rendered ${count} pages`);
      }
    }
    return files;
  };
  const records = listSearchRecords(index);
  const scopes: SiteScopes = {
    search: { inputs: digestSearchRecords(records), extras: () => ({ files: [], later: () => buildSearchIndex(records, options.log ? { log: options.log } : {}) }) },
    // Read from the compilation only when it changed: they are tens of megabytes (duckdb-wasm).
    assets: { inputs: compiled.fingerprint, extras: () => ({ files: [], later: compiled.readAssets }) },
    global: () => ({ files: [renderSitemapIndex(index), renderPagesSitemap(index), renderRobotsTxt(index.settings.baseUrl)], later: render(() => listGlobalPages(context, settings)) }),
    collection: (entry) => ({ files: renderCollectionSitemaps(index.settings.baseUrl, entry.collection), later: render(() => listCollectionPages(context, entry)) }),
    dataset: (collection, dataset) => ({
      files: [renderQuerySources(index, collection, dataset)],
      later: async () => {
        const jobs = listDatasetPages(context, collection, dataset, settings);
        return [...(await renderJobs(jobs)), ...(await drawPictures(jobs))];
      },
    }),
  };
  // Each file page's map picture, beside its index.html; the basemap is read once, on the first.
  let basemap: Promise<Basemap> | undefined;
  // A picture depends only on the file's bounds and archive, which no stage after the twins changes: files that
  // share both (versions of one file, a catalog that lists one archive many times) are drawn once. About 25 ms each.
  const pictures = new Map<string, string>();
  const drawPictures = async (jobs: PageJob[]) => {
    const files: TreeFile[] = [];
    for (const job of jobs) {
      if (job.page.view !== 'file') continue;
      const facts = readFileMapFacts(job.page.props.file, job.page.props.schema);
      if (!facts.showMap) continue;
      basemap ??= readBasemap(join(options.root, 'public', 'basemap'));
      const local = options.dataDir && facts.tilesPath && facts.tilesUrl?.startsWith(`${index.settings.storageBaseUrl}/`) ? join(options.dataDir, facts.tilesPath) : null;
      const memo = JSON.stringify([local, facts.bounds]);
      const body = pictures.get(memo) ?? (await drawMapPicture({ bounds: facts.bounds, archivePath: local }, await basemap));
      pictures.delete(memo);
      pictures.set(memo, body);
      if (pictures.size > PICTURE_MEMO_SIZE) pictures.delete(pictures.keys().next().value!);
      const key = job.key.replace(/index\.html$/, MAP_PICTURE_FILE);
      files.push({ key, body: encoder.encode(body), type: contentTypeOf(key) });
    }
    return files;
  };
  const fingerprint = `${compiled.fingerprint}:${settings.queryOrigin}:${settings.browserSqlLimitBytes}`;
  return { scopes, fingerprint, rendered: () => count };
}

const encoder = new TextEncoder();
/** Pictures kept for files that share an archive and bounds: the most recently drawn, a few MB at most. */
const PICTURE_MEMO_SIZE = 32;
const HTML = contentTypeOf('index.html');
