/**
 * `/sitemap.xml` and `/robots.txt` (sitemaps.org protocol 0.9). The sitemap is an index of child sitemaps: one of the
 * pages that belong to no collection (home, developers), and one per collection with its listing pages, dataset
 * pages and file pages, split into numbered children past 50,000 URLs. Search, console, 404 and tag-filtered
 * listings are left out. Children sit beside the index at the root of the tree: a sitemap may only list URLs under
 * its own folder. A collection's children are rendered in its scope, so an edit rewrites its own and the index.
 */
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { CATALOG_FILES, DEFAULT_LIST_LIMIT } from '../../../core/constants.ts';
import type { CollectionModel, DatasetModel, FileModel } from '../../../core/model.ts';
import { collectionPath, datasetPath, filePath, SITE_PATHS } from '../../../core/site/paths.ts';
import type { TreeFile } from '../../../core/static-files.ts';
import { contentTypeOf } from './content-types.ts';
import { escapeXml } from '../xml.ts';

/** A page of a sitemap: its absolute URL, and when it last changed (W3C datetime) when the records say. */
export interface SitemapUrl {
  loc: string;
  lastmod?: string;
}

/** A child sitemap before it is written: its key in the tree and its URLs. */
interface SitemapChild {
  key: string;
  urls: SitemapUrl[];
}

/** The most URLs one sitemap may list (sitemaps.org). */
export const SITEMAP_MAX_URLS = 50_000;

/** Key of the sitemap index. */
export const SITEMAP_INDEX_KEY = CATALOG_FILES.sitemap;

/** Key of the child sitemap of the pages outside collections. */
export const PAGES_SITEMAP_KEY = 'sitemap-pages.xml';

/**
 * Key of a collection's child sitemap, 1-based: `sitemap-collection-<slug>.xml`, then `…_2.xml`. A slug has no
 * `_`, so a numbered child never meets another collection's.
 */
export function makeCollectionSitemapKey(collectionSlug: string, part = 1): string {
  return `sitemap-collection-${collectionSlug}${part > 1 ? `_${part}` : ''}.xml`;
}

/** Every page of a collection to index: its listing pages, then each dataset's page followed by its files' pages. */
function listCollectionUrls(baseUrl: string, collection: CollectionModel): SitemapUrl[] {
  const slug = collection.slug;
  const listed = findLatest([collection.updated_at, ...collection.datasets.map((dataset) => dataset.updated_at)]);
  const pageCount = Math.max(1, Math.ceil(collection.datasets.length / DEFAULT_LIST_LIMIT));
  const urls: SitemapUrl[] = [];
  for (let page = 1; page <= pageCount; page += 1) urls.push(makeUrl(baseUrl, collectionPath(slug, page), listed));
  for (const dataset of collection.datasets) {
    urls.push(makeUrl(baseUrl, datasetPath(slug, dataset.slug), findLatest(listDatasetTimestamps(dataset))));
    for (const file of dataset.files) urls.push(makeUrl(baseUrl, filePath(slug, dataset.slug, file.slug), findLatest(listFileTimestamps(file))));
  }
  return urls;
}

/** A collection's child sitemaps: its URLs, at most 50,000 to a child (always one child, the listing's first page). */
function splitCollectionSitemaps(baseUrl: string, collection: CollectionModel): SitemapChild[] {
  const urls = listCollectionUrls(baseUrl, collection);
  const children: SitemapChild[] = [];
  for (let start = 0; start < urls.length; start += SITEMAP_MAX_URLS) {
    children.push({ key: makeCollectionSitemapKey(collection.slug, children.length + 1), urls: urls.slice(start, start + SITEMAP_MAX_URLS) });
  }
  return children;
}

/** A collection's child sitemaps as files of the tree. */
export function renderCollectionSitemaps(baseUrl: string, collection: CollectionModel): TreeFile[] {
  return splitCollectionSitemaps(baseUrl, collection).map((child) => makeXmlFile(child.key, renderUrlset(child.urls)));
}

/** The child sitemap of the home page (changed with the latest record) and the developers page. */
export function renderPagesSitemap(index: CatalogIndex): TreeFile {
  return makeXmlFile(PAGES_SITEMAP_KEY, renderUrlset(listPagesUrls(index)));
}

/**
 * `/sitemap.xml`: every child sitemap, each with the latest lastmod of its URLs. A collection of one child takes the
 * latest of its records' times without listing its URLs: the index is rendered again at every edit.
 */
export function renderSitemapIndex(index: CatalogIndex): TreeFile {
  const base = index.settings.baseUrl;
  const children = [{ key: PAGES_SITEMAP_KEY, lastmod: findLatest(listPagesUrls(index).map((url) => url.lastmod)) }];
  for (const collection of index.model.collections) {
    const urlCount = Math.max(1, Math.ceil(collection.datasets.length / DEFAULT_LIST_LIMIT)) + collection.datasets.reduce((sum, dataset) => sum + 1 + dataset.files.length, 0);
    if (urlCount <= SITEMAP_MAX_URLS) {
      children.push({ key: makeCollectionSitemapKey(collection.slug), lastmod: findLatest([findLatestInCollection(collection)]) });
    } else {
      children.push(...splitCollectionSitemaps(base, collection).map((child) => ({ key: child.key, lastmod: findLatest(child.urls.map((url) => url.lastmod)) })));
    }
  }
  const entries = children.map((child) => renderEntry('sitemap', `${base}/${child.key}`, child.lastmod));
  return makeXmlFile(SITEMAP_INDEX_KEY, `${XML_DECLARATION}<sitemapindex xmlns="${SITEMAP_NAMESPACE}">\n${entries.join('')}</sitemapindex>\n`);
}

/** `/robots.txt`: allows every path and names the sitemap index. */
export function renderRobotsTxt(baseUrl: string): TreeFile {
  return { key: 'robots.txt', body: encoder.encode(`User-agent: *\nAllow: /\n\nSitemap: ${baseUrl}/${SITEMAP_INDEX_KEY}\n`), type: contentTypeOf('robots.txt') };
}

/** Writes a record timestamp (UTC, no timezone: `2024-05-01T10:00:00`) as a W3C datetime: `2024-05-01T10:00:00Z`. */
function formatLastmod(timestamp: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(timestamp) ? `${timestamp}Z` : timestamp;
}


const SITEMAP_NAMESPACE = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const encoder = new TextEncoder();

function listPagesUrls(index: CatalogIndex): SitemapUrl[] {
  const base = index.settings.baseUrl;
  const everything = index.model.collections.map(findLatestInCollection);
  return [makeUrl(base, SITE_PATHS.home, findLatest(everything)), makeUrl(base, SITE_PATHS.developers, undefined)];
}

/** The latest record time of each collection of a build: the index and the pages child each need all of them. */
const LATEST_IN_COLLECTION = new WeakMap<CollectionModel, string>();

/**
 * The latest record time of a collection, its datasets, files, formats and versions, read without gathering them:
 * the index and the pages child are rendered again at every edit, over every collection. Walked once per build
 * (the three walks of 10k × 3 took 0.16 s).
 */
function findLatestInCollection(collection: CollectionModel): string {
  const known = LATEST_IN_COLLECTION.get(collection);
  if (known !== undefined) return known;
  const latest = walkLatest(collection);
  LATEST_IN_COLLECTION.set(collection, latest);
  return latest;
}

function walkLatest(collection: CollectionModel): string {
  let latest = collection.updated_at;
  for (const dataset of collection.datasets) {
    if (dataset.updated_at > latest) latest = dataset.updated_at;
    for (const file of dataset.files) {
      if (file.updated_at > latest) latest = file.updated_at;
      for (const link of file.formats) {
        if (link.updated_at > latest) latest = link.updated_at;
        for (const source of link.sources) if (source.updated_at > latest) latest = source.updated_at;
      }
    }
  }
  return latest;
}

/** A dataset page shows the dataset and its files. */
function listDatasetTimestamps(dataset: DatasetModel): string[] {
  return [dataset.updated_at, ...dataset.files.flatMap(listFileTimestamps)];
}

/** A file page shows the file and every version of each of its formats. */
function listFileTimestamps(file: FileModel): string[] {
  return [file.updated_at, ...file.formats.flatMap((link) => [link.updated_at, ...link.sources.map((source) => source.updated_at)])];
}

/** The latest of record timestamps as a W3C datetime; undefined when there is none. Timestamps of one form sort as text. */
function findLatest(timestamps: (string | undefined)[]): string | undefined {
  let latest: string | undefined;
  for (const timestamp of timestamps) if (timestamp !== undefined && (latest === undefined || timestamp > latest)) latest = timestamp;
  return latest === undefined ? undefined : formatLastmod(latest);
}

function makeUrl(baseUrl: string, path: string, lastmod: string | undefined): SitemapUrl {
  return { loc: `${baseUrl}${path}`, ...(lastmod ? { lastmod } : {}) };
}

function renderUrlset(urls: SitemapUrl[]): string {
  return `${XML_DECLARATION}<urlset xmlns="${SITEMAP_NAMESPACE}">\n${urls.map((url) => renderEntry('url', url.loc, url.lastmod)).join('')}</urlset>\n`;
}

/** One `<url>` or `<sitemap>` element, on a line of its own. */
function renderEntry(element: 'url' | 'sitemap', loc: string, lastmod: string | undefined): string {
  return `<${element}><loc>${escapeXml(loc)}</loc>${lastmod ? `<lastmod>${lastmod}</lastmod>` : ''}</${element}>\n`;
}

function makeXmlFile(key: string, text: string): TreeFile {
  return { key, body: encoder.encode(text), type: contentTypeOf(key) };
}
