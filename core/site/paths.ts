import { foldTagValue } from '../tag-filters.ts';

/** Where the web app's pages live. Every page is `<path>index.html` in the static tree; paths end in `/`. */
export const SITE_PATHS = {
  home: '/',
  search: '/search/',
  console: '/console/',
  developers: '/developers/',
  notFound: '/404.html',
  /** Every site asset (scripts, styles, basemap, search index) lives under this prefix. */
  assets: '/_site/',
} as const;

/** Path of a collection's page: the first page of its datasets, or page `n` (1-based). */
export function collectionPath(collectionSlug: string, page = 1): string {
  return `/collections/${collectionSlug}/${page > 1 ? `page/${page}/` : ''}`;
}

/** Path of a collection's datasets filtered by one tag value, page `n`. */
export function tagPath(collectionSlug: string, key: string, value: string, page = 1): string {
  return `/collections/${collectionSlug}/tags/${slugifyTag(key)}/${slugifyTag(value)}/${page > 1 ? `page/${page}/` : ''}`;
}

/** Path of a dataset's page. */
export function datasetPath(collectionSlug: string, datasetSlug: string): string {
  return `/collections/${collectionSlug}/datasets/${datasetSlug}/`;
}

/** Path of a file's page (its data dictionary and preview). */
export function filePath(collectionSlug: string, datasetSlug: string, fileSlug: string): string {
  return `${datasetPath(collectionSlug, datasetSlug)}files/${fileSlug}/`;
}

/** Path of a dataset's query sources, read by the SQL console. */
export function querySourcesPath(collectionSlug: string, datasetSlug: string): string {
  return `${datasetPath(collectionSlug, datasetSlug)}query-sources.json`;
}

/**
 * The JSON form of a page: the same path under `/api`, without the trailing slash.
 * @example apiPathFor('/collections/geonames/') // '/api/collections/geonames'
 */
export function apiPathFor(pagePath: string): string {
  return `/api${pagePath.replace(/\/$/, '')}`;
}

/** Static-tree key of a page path: `collections/x/index.html`, `index.html` for the home page. */
export function pageKey(pagePath: string): string {
  return pagePath.endsWith('.html') ? pagePath.slice(1) : `${pagePath.slice(1)}index.html`;
}

/** A tag key or value as one URL segment: folded, runs of other characters turned into single hyphens. */
export function slugifyTag(value: string): string {
  return foldTagValue(value).replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || '-';
}
