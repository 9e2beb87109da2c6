import type { CatalogRoute } from '../core/api/catalog/resolve.ts';
import { CATALOG_ROUTES } from '../core/api/catalog/routes.ts';
import type { Route } from '../core/api/route-table.ts';
import { RESERVED_DATASET_SLUGS } from '../core/constants.ts';
import { findUnusedTagKeys, renderCatalogSearchPage, type CatalogSearchPage } from '../core/api/mcp/search-catalog.ts';
import { answerCatalogRoute } from '../core/api/catalog/answer.ts';
import type { CatalogSnapshot } from './catalog.ts';
import { CatalogFailure, createSlugNotFound } from './mcp-errors.ts';

/** A catalog route that answers a document (the OpenAPI document is a build artefact, not a catalog answer). */
export type DocumentRouteName = Exclude<CatalogRoute['route'], 'openapi'>;
/** The path values of a route, as the text a tool was given: `{ collectionSlug, datasetSlug }` for `dataset`. */
export type RoutePathText<N extends DocumentRouteName> = { [K in Exclude<keyof Extract<CatalogRoute, { route: N }>, 'route' | 'params'>]: string };
/** Query parameters as a tool gives them; undefined ones are absent. */
export type RouteQueryText = Record<string, string | number | undefined>;

/**
 * The document of a catalog route, computed as /api computes it: the path values and parameters parsed by the route
 * table (core/api/catalog/routes.ts, so the same rules and messages), then the catalog's own answer
 * (core/api/catalog/answer.ts `answerCatalogRoute`, which the catalog handler calls too). A failure is a CatalogFailure:
 * `not_found` for a slug that is malformed or names nothing, `invalid_parameter` with the parameter's detail.
 * @example readCatalogDocument(snapshot, 'tags', { collectionSlug: 'natural-earth' }, { tag_key: 'categories' })
 */
export function readCatalogDocument<N extends DocumentRouteName>(snapshot: CatalogSnapshot, name: N, pathText: RoutePathText<N>, query: RouteQueryText = {}): unknown {
  const route = CATALOG_ROUTES[name] as Route;
  // The path is checked before the parameters, so a slug that names nothing is not blamed on them.
  const path = route.parsePath(pathText);
  if (!path.ok || isFixedSegment(name, pathText)) throw createSlugNotFound();
  const params = route.parseQuery(toSearchParams(query));
  if (!params.ok) throw new CatalogFailure('invalid_parameter', params.detail);
  // The route as the URL resolver makes it (core/api/catalog/resolve.ts): `params` only on a route that takes some.
  const hasQuery = Object.keys(route.query ?? {}).length > 0;
  const answer = answerCatalogRoute(snapshot.context, { route: name, ...path.value, ...(hasQuery ? { params: params.value } : {}) } as Extract<CatalogRoute, { route: N }>);
  if (answer.problem) {
    const detail = (answer.body as { detail?: string }).detail ?? 'The catalog refused the request.';
    throw new CatalogFailure(answer.status === 404 ? 'not_found' : 'invalid_parameter', detail);
  }
  return answer.body;
}

/**
 * Whether a dataset slug is the word of a fixed route in its place (`/api/collections/{slug}/datasets/tags`):
 * /api serves that route there, never a dataset, so the tools do not either.
 */
function isFixedSegment(name: DocumentRouteName, pathText: Record<string, string>): boolean {
  return name === 'dataset' && (RESERVED_DATASET_SLUGS as readonly string[]).includes(pathText.datasetSlug!);
}

/**
 * search_datasets without a collection: the parameters parsed by the collection listing's own route (so the same
 * words, limits and messages), then every collection searched at once (core/api/mcp/search-catalog.ts).
 */
export function searchCatalog(snapshot: CatalogSnapshot, query: RouteQueryText): CatalogSearchPage {
  const parsed = CATALOG_ROUTES.collection.parseQuery(toSearchParams(query));
  if (!parsed.ok) throw new CatalogFailure('invalid_parameter', parsed.detail);
  const unused = findUnusedTagKeys(snapshot.context.index, parsed.value);
  if (unused.length > 0) {
    const keys = unused.map((key) => `"${key.slice(0, 40)}"`).join(', ');
    throw new CatalogFailure('invalid_parameter', `tag key ${keys} is used by no collection; list_tags gives the keys of a collection.`);
  }
  return renderCatalogSearchPage(snapshot.context, parsed.value);
}

/** A dataset detail document, as far as get_source reads it. */
interface DatasetSources {
  dataset: { files?: { formats: { sources: { id: number }[] }[] }[] };
}

/** One source of a dataset detail document (with its URLs), by id; `not_found` names the dataset when it has none. */
export function findSource(detail: unknown, datasetSlug: string, sourceId: number): unknown {
  const { dataset } = detail as DatasetSources;
  const source = dataset.files?.flatMap((file) => file.formats.flatMap((format) => format.sources)).find((candidate) => candidate.id === sourceId);
  if (!source) throw new CatalogFailure('not_found', `Dataset "${datasetSlug}" has no source ${sourceId}; get_dataset lists its sources.`);
  return source;
}

/** Tool arguments as the text of query parameters, which the route table parses as it parses a URL's. */
function toSearchParams(query: RouteQueryText): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return params;
}
