import type { CatalogIndex } from '../catalog-index.ts';
import type { CatalogRoute } from '../api/catalog/resolve.ts';
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

/**
 * Computes the answer of a catalog route. The generator writes these answers as files and the server computes
 * the same function for parameter combinations that were not prebuilt, so both give identical bytes.
 * The OpenAPI document is not computed here: it is a build artefact of the schemas.
 */
export function answerCatalogRoute(context: RenderContext, route: Exclude<CatalogRoute, { route: 'openapi' }>): CatalogAnswer {
  const { index } = context;
  const ok = (body: unknown): CatalogAnswer => ({ status: 200, body, problem: false });
  const problem = (kind: ProblemKind, detail: string): CatalogAnswer => {
    const body = renderProblem(kind, detail, index.settings.baseUrl);
    return { status: body.status, body, problem: true };
  };
  switch (route.route) {
    case 'root':
      return ok(renderApiRoot(context));
    case 'health':
      return ok({ status: 'ok' });
    case 'collections':
      return ok(renderCollectionList(context, route.params?.include));
    case 'collection': {
      const entry = index.collections.get(route.slug);
      if (!entry) return problem('not-found', `There is no collection "${route.slug}". GET /api/collections lists them.`);
      const params = route.params ?? {};
      const unknownKeys = [...(params.tag_filters?.keys() ?? [])].filter((key) => !Object.hasOwn(entry.tags, key));
      if (unknownKeys.length > 0) {
        const known = Object.keys(entry.tags);
        return problem('invalid-parameter', `tag key ${unknownKeys.map((key) => `"${key.slice(0, 40)}"`).join(', ')} is not used in collection "${route.slug}"; its keys are ${known.length ? known.join(', ') : '(none)'}.`);
      }
      return ok(renderCollectionPage(entry, params, context));
    }
    case 'tags': {
      const entry = index.collections.get(route.collectionSlug);
      if (!entry) return problem('not-found', `There is no collection "${route.collectionSlug}". GET /api/collections lists them.`);
      return ok(renderTags(entry, route.params?.tag_key, context));
    }
    case 'dataset': {
      const found = lookupDataset(index, route.collectionSlug, route.datasetSlug);
      if (!found.ok) return problem('not-found', found.detail);
      return ok(renderDatasetDetail(found.collection, found.dataset, context, route.params?.include_urls === true));
    }
    case 'file': {
      const found = lookupFile(index, route.collectionSlug, route.datasetSlug, route.fileSlug);
      if (!found.ok) return problem('not-found', found.detail);
      return ok(renderFileResponse(found.collection, found.dataset, found.file, context));
    }
    case 'schema': {
      const found = lookupFile(index, route.collectionSlug, route.datasetSlug, route.fileSlug);
      if (!found.ok) return problem('not-found', found.detail);
      const params = route.params ?? {};
      const body = renderSchemaResponse(found.collection, found.dataset, found.file, params, context);
      if (!body) return problem('not-found', `File "${route.fileSlug}" has no version "${params.version}". The schema route without version lists its versions.`);
      return ok(body);
    }
    case 'datasets':
      return ok(renderDatasetAggregate(context));
    case 'dataset-by-id': {
      const found = index.datasetsById.get(route.id);
      if (!found) return problem('not-found', `There is no dataset with id ${route.id}.`);
      return ok(renderDatasetById(found.collection, found.dataset, context));
    }
    case 'stats':
      return ok(renderDatasetStats(context));
  }
}
