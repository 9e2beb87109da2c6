import type { CatalogIndex } from '../../catalog-index.ts';
import type { CatalogRoute } from './resolve.ts';
import { renderDatasetAggregate, renderDatasetStats } from './aggregate.ts';
import { lookupDataset, lookupFile, renderDatasetById, renderDatasetDetail, renderFileResponse, renderSchemaResponse } from './detail.ts';
import { renderApiRoot } from './discovery.ts';
import { createLinker } from './links.ts';
import { renderCollectionList, renderCollectionPage, renderTags } from './listing.ts';
import { renderProblem, type ProblemKind } from './problems.ts';
import type { RenderContext } from './resources.ts';

/** A computed answer: the status and the JSON body; `problem` marks application/problem+json. */
export interface CatalogAnswer {
  status: number;
  body: unknown;
  problem: boolean;
}

/** Creates the render context of an index; reuse it across answers. */
export function createRenderContext(index: CatalogIndex): RenderContext {
  return { index, links: createLinker(index.settings.baseUrl) };
}

/** A catalog route the renderers answer: every one but the OpenAPI document, which is a build artefact of the schemas. */
export type RenderedRoute = Exclude<CatalogRoute, { route: 'openapi' }>;
/** Renders the answer of one catalog route. */
type Renderer<N extends RenderedRoute['route']> = (context: RenderContext, route: Extract<RenderedRoute, { route: N }>) => CatalogAnswer;

const ok = (body: unknown): CatalogAnswer => ({ status: 200, body, problem: false });
const problem = (context: RenderContext, kind: ProblemKind, detail: string): CatalogAnswer => {
  const body = renderProblem(kind, detail, context.index.settings.baseUrl);
  return { status: body.status, body, problem: true };
};
const noCollection = (context: RenderContext, slug: string) => problem(context, 'not-found', `There is no collection "${slug}". GET /api/collections lists them.`);

/**
 * The renderer of each catalog route, by its name in the route table (core/api/catalog/routes.ts). The compiler
 * refuses a route without one, so a new route is declared there and rendered here, nowhere else.
 */
export const CATALOG_RENDERERS: { [N in RenderedRoute['route']]: Renderer<N> } = {
  root: (context) => ok(renderApiRoot(context)),
  health: () => ok({ status: 'ok' }),
  collections: (context, route) => ok(renderCollectionList(context, route.params?.include)),
  collection: (context, route) => {
    const entry = context.index.collections.get(route.slug);
    if (!entry) return noCollection(context, route.slug);
    const params = route.params ?? {};
    const unknownKeys = [...(params.tag_filters?.keys() ?? [])].filter((key) => !Object.hasOwn(entry.tags, key));
    if (unknownKeys.length > 0) {
      const known = Object.keys(entry.tags);
      return problem(context, 'invalid-parameter', `tag key ${unknownKeys.map((key) => `"${key.slice(0, 40)}"`).join(', ')} is not used in collection "${route.slug}"; its keys are ${known.length ? known.join(', ') : '(none)'}.`);
    }
    return ok(renderCollectionPage(entry, params, context));
  },
  tags: (context, route) => {
    const entry = context.index.collections.get(route.collectionSlug);
    if (!entry) return noCollection(context, route.collectionSlug);
    return ok(renderTags(entry, route.params?.tag_key, context));
  },
  dataset: (context, route) => {
    const found = lookupDataset(context.index, route.collectionSlug, route.datasetSlug);
    if (!found.ok) return problem(context, 'not-found', found.detail);
    return ok(renderDatasetDetail(found.collection, found.dataset, context, route.params?.include_urls === true));
  },
  file: (context, route) => {
    const found = lookupFile(context.index, route.collectionSlug, route.datasetSlug, route.fileSlug);
    if (!found.ok) return problem(context, 'not-found', found.detail);
    return ok(renderFileResponse(found.collection, found.dataset, found.file, context));
  },
  schema: (context, route) => {
    const found = lookupFile(context.index, route.collectionSlug, route.datasetSlug, route.fileSlug);
    if (!found.ok) return problem(context, 'not-found', found.detail);
    const params = route.params ?? {};
    const body = renderSchemaResponse(found.collection, found.dataset, found.file, params, context);
    if (!body) return problem(context, 'not-found', `File "${route.fileSlug}" has no version "${params.version}". The schema route without version lists its versions.`);
    return ok(body);
  },
  datasets: (context) => ok(renderDatasetAggregate(context)),
  'dataset-by-id': (context, route) => {
    const found = context.index.datasetsById.get(route.id);
    if (!found) return problem(context, 'not-found', `There is no dataset with id ${route.id}.`);
    return ok(renderDatasetById(found.collection, found.dataset, context));
  },
  stats: (context) => ok(renderDatasetStats(context)),
};

/**
 * Computes the answer of a catalog route with its renderer. The generator writes these answers as files and the
 * server computes the same function for parameter combinations that were not prebuilt, so both give identical bytes.
 */
export function answerCatalogRoute(context: RenderContext, route: RenderedRoute): CatalogAnswer {
  return (CATALOG_RENDERERS[route.route] as Renderer<RenderedRoute['route']>)(context, route);
}
