/**
 * Reads the two site documents the console needs, checked against `schemas/site.ts`. This module pulls in zod,
 * so the console imports it with `import()` only when a dataset is picked or a link is restored.
 */
import { parseWithFriendlyErrors } from '../../../schemas/parse.ts';
import { SiteDatasetListSchema, SiteQuerySourcesSchema, type SiteDatasetList, type SiteQuerySources } from '../../../schemas/site.ts';

/** Fetches and checks `/_site/datasets.json`. */
export async function fetchDatasetList(url: string): Promise<SiteDatasetList> {
  return parseWithFriendlyErrors(SiteDatasetListSchema, await fetchJson(url), { source: url });
}

/** Fetches and checks a dataset's `query-sources.json`. */
export async function fetchQuerySources(url: string): Promise<SiteQuerySources> {
  return parseWithFriendlyErrors(SiteQuerySourcesSchema, await fetchJson(url), { source: url });
}

async function fetchJson(url: string): Promise<unknown> {
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}${response.status === 404 ? ' (not found)' : ''}.`);
  return response.json();
}
