import { SITE_PATHS } from '../core/site/paths.ts';
import { formatConsoleLink, suggestAlias } from './client/console/url-state.ts';

/** A link that opens the SQL console with one file as a source and a first query over it, ready to run. */
export function consoleLink(collectionSlug: string, datasetSlug: string, fileSlug: string): string {
  const alias = suggestAlias(fileSlug, []);
  const source = { alias, collection: collectionSlug, dataset: datasetSlug, file: fileSlug, version: null };
  return `${SITE_PATHS.console}${formatConsoleLink({ sources: [source], sql: `SELECT * FROM ${alias} LIMIT 100`, mode: null })}`;
}
