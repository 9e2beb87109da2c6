import { MAX_AGGREGATE_ROWS } from '../../constants.ts';
import type { DatasetModel } from '../../model.ts';
import type { RenderContext } from './resources.ts';

/** `GET /api/datasets`: the first `MAX_AGGREGATE_ROWS` datasets across collections by id, each with its collection. */
export function renderDatasetAggregate(context: RenderContext) {
  const rows = [...context.index.datasetsById.values()].sort((a, b) => a.dataset.id - b.dataset.id).slice(0, MAX_AGGREGATE_ROWS);
  return rows.map(({ collection, dataset }) => ({
    id: dataset.id,
    slug: dataset.slug,
    name: dataset.name,
    collection_id: collection.id,
    collection_slug: collection.slug,
    links: { self: context.links.dataset(collection.slug, dataset.slug), by_id: context.links.datasetById(dataset.id) },
  }));
}

/** Whether every file of a dataset has a source whose statistics were computed from the data. */
export function isDatasetReady(dataset: DatasetModel): boolean {
  return dataset.files.every((file) => file.formats.some((link) => link.sources.some((source) => typeof source.metadata?.feature_count === 'number')));
}

/** `GET /api/datasets/stats`. */
export function renderDatasetStats(context: RenderContext) {
  const datasets = [...context.index.datasetsById.values()];
  return {
    total: datasets.length,
    ready: datasets.filter(({ dataset }) => isDatasetReady(dataset)).length,
    links: { self: context.links.stats(), datasets: context.links.datasets(), collections: context.links.collections() },
  };
}
