import type { CatalogIndex } from '../../catalog-index.ts';
import { renderDatasetAggregate, renderDatasetStats } from './aggregate.ts';
import { lookupDataset, lookupFile, renderDatasetById, renderDatasetDetail, renderFileResponse, renderSchemaResponse } from './detail.ts';
import { renderApiRoot } from './discovery.ts';
import { createLinker } from './links.ts';
import { renderCollectionList, renderCollectionPage, renderTags } from './listing.ts';
import { renderProblem, type ProblemKind } from './problems.ts';
import { listCollectionPages, listCollectionTags, listSchemaDocuments, type Prebuilt, type RenderedRoute } from './prebuilt.ts';
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

/** Renders the answer of one catalog route. */
type Renderer<N extends RenderedRoute['route']> = (context: RenderContext, route: Extract<RenderedRoute, { route: N }>) => CatalogAnswer;
/** What a catalog route is made of beside its declaration: its renderer, and the documents the build writes. */
interface CatalogRouteParts<N extends RenderedRoute['route']> {
  render: Renderer<N>;
  prebuilt: Prebuilt<N>;
}

const ok = (body: unknown): CatalogAnswer => ({ status: 200, body, problem: false });
const problem = (context: RenderContext, kind: ProblemKind, detail: string): CatalogAnswer => {
  const body = renderProblem(kind, detail, context.index.settings.baseUrl);
  return { status: body.status, body, problem: true };
};
const noCollection = (context: RenderContext, slug: string) => problem(context, 'not-found', `There is no collection "${slug}". GET /api/collections lists them.`);

/**
 * The renderer of each catalog route, by its name in the route table (core/api/catalog/routes.ts), and the documents
 * of it the build writes as files, by scope (core/api/catalog/prebuilt.ts). The compiler refuses a route without
 * both, so a new route is declared there and made here, nowhere else. Within a scope, files are rendered in the
 * order of this table.
 */
export const CATALOG_RENDERERS: { [N in RenderedRoute['route']]: CatalogRouteParts<N> } = {
  root: { render: (context) => ok(renderApiRoot(context)), prebuilt: { scope: 'global', list: () => [{ route: 'root' }] } },
  health: { render: () => ok({ status: 'ok' }), prebuilt: { scope: 'global', list: () => [{ route: 'health' }] } },
  collections: {
    render: (context, route) => ok(renderCollectionList(context, route.params?.include)),
    prebuilt: {
      scope: 'global',
      list: () => [{ route: 'collections' }, { route: 'collections', params: { include: 'datasets' } }, { route: 'collections', params: { include: 'datasets,files' } }],
    },
  },
  collection: {
    render: (context, route) => {
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
    prebuilt: { scope: 'collection', list: listCollectionPages },
  },
  tags: {
    render: (context, route) => {
      const entry = context.index.collections.get(route.collectionSlug);
      if (!entry) return noCollection(context, route.collectionSlug);
      return ok(renderTags(entry, route.params?.tag_key, context));
    },
    prebuilt: { scope: 'collection', list: listCollectionTags },
  },
  dataset: {
    render: (context, route) => {
      const found = lookupDataset(context.index, route.collectionSlug, route.datasetSlug);
      if (!found.ok) return problem(context, 'not-found', found.detail);
      return ok(renderDatasetDetail(found.collection, found.dataset, context, route.params?.include_urls === true));
    },
    prebuilt: {
      scope: 'dataset',
      list: (collection, dataset) => {
        const at = { collectionSlug: collection.slug, datasetSlug: dataset.slug };
        return [{ route: 'dataset', ...at }, { route: 'dataset', ...at, params: { include_urls: true } }];
      },
    },
  },
  file: {
    render: (context, route) => {
      const found = lookupFile(context.index, route.collectionSlug, route.datasetSlug, route.fileSlug);
      if (!found.ok) return problem(context, 'not-found', found.detail);
      return ok(renderFileResponse(found.collection, found.dataset, found.file, context));
    },
    prebuilt: { scope: 'file', list: ({ collection, dataset, file }) => [{ route: 'file', collectionSlug: collection.slug, datasetSlug: dataset.slug, fileSlug: file.slug }] },
  },
  schema: {
    render: (context, route) => {
      const found = lookupFile(context.index, route.collectionSlug, route.datasetSlug, route.fileSlug);
      if (!found.ok) return problem(context, 'not-found', found.detail);
      const params = route.params ?? {};
      const body = renderSchemaResponse(found.collection, found.dataset, found.file, params, context);
      if (!body) return problem(context, 'not-found', `File "${route.fileSlug}" has no version "${params.version}". The schema route without version lists its versions.`);
      return ok(body);
    },
    prebuilt: { scope: 'file', list: listSchemaDocuments },
  },
  datasets: { render: (context) => ok(renderDatasetAggregate(context)), prebuilt: { scope: 'global', list: () => [{ route: 'datasets' }] } },
  'dataset-by-id': {
    render: (context, route) => {
      const found = context.index.datasetsById.get(route.id);
      if (!found) return problem(context, 'not-found', `There is no dataset with id ${route.id}.`);
      return ok(renderDatasetById(found.collection, found.dataset, context));
    },
    prebuilt: { scope: 'dataset', list: (_collection, dataset) => [{ route: 'dataset-by-id', id: dataset.id }] },
  },
  stats: { render: (context) => ok(renderDatasetStats(context)), prebuilt: { scope: 'global', list: () => [{ route: 'stats' }] } },
};

/**
 * Computes the answer of a catalog route with its renderer. The generator writes these answers as files and the
 * server computes the same function for parameter combinations that were not prebuilt, so both give identical bytes.
 */
export function answerCatalogRoute(context: RenderContext, route: RenderedRoute): CatalogAnswer {
  return (CATALOG_RENDERERS[route.route].render as Renderer<RenderedRoute['route']>)(context, route);
}
