/**
 * Reads the site document the console needs of each dataset, checked against `schemas/site.ts`. This module pulls
 * in zod, so the console imports it with `import()` only when a dataset is picked or a link is restored.
 */
import { parseWithFriendlyErrors } from '../../../schemas/parse.ts';
import { SiteQuerySourcesSchema, type SiteQuerySources } from '../../../schemas/site.ts';

/** Fetches and checks a dataset's `query-sources.json`. */
export async function fetchQuerySources(url: string): Promise<SiteQuerySources> {
  return parseWithFriendlyErrors(SiteQuerySourcesSchema, await fetchJson(url), { source: url });
}

async function fetchJson(url: string): Promise<unknown> {
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}${response.status === 404 ? ' (not found)' : ''}.`);
  return response.json();
}
