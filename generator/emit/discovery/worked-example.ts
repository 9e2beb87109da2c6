/**
 * The worked example that /llms.txt and the agent skills walk an agent through: ids that exist in this build and a
 * query over one of its GeoParquet sources. Read by the guide's sections, and by tests/agent-walkthrough.test.ts,
 * which sends the example's requests as they are written.
 */
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import type { CollectionModel, DatasetModel, FileModel, SourceModel } from '../../../core/model.ts';
import { resolveSources } from '../../../query/sources.ts';
import type { QueryRequest, SourceReference } from '../../../schemas/query.ts';

/** Rows per page of the worked example: the first page holds rows 0–4, the second rows 5–9. */
export const EXAMPLE_PAGE_SIZE = 5;

/** Placeholders in the worked example for what the first answer gives; an agent puts the real values in. */
export const EXAMPLE_PLACEHOLDERS = { queryId: '{query_id}', queryToken: '{query_token}' } as const;

/**
 * The worked example of /llms.txt and the skills: a chain of ids that exists in this build and a query over a text
 * column of it, so an agent that copies it gets rows, not `source_not_found`.
 */
export interface WorkedExample {
  collection: CollectionModel;
  dataset: DatasetModel;
  file: FileModel;
  source: SourceModel;
  /** The text column the query selects and orders by. */
  column: string;
  /** The first geometry column, for the map example. */
  geometryColumn: string | undefined;
  /** The body of `POST /api/queries` and of the `run_query` tool. */
  query: QueryRequest;
}

/**
 * The first GeoParquet source, in catalog order, that the query service's own resolver accepts and whose data
 * dictionary has a text column; undefined for a catalog without one.
 */
export function findWorkedExample(index: CatalogIndex): WorkedExample | undefined {
  for (const collection of index.model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        for (const link of file.formats) {
          if (index.formatsById.get(link.format_id)?.format_type !== 'geoparquet') continue;
          for (const source of link.sources) {
            const example = exampleOver(index, collection, dataset, file, source);
            if (example) return example;
          }
        }
      }
    }
  }
  return undefined;
}

/** The API URL of the example's dataset, optionally one of its file routes. */
export function exampleUrl(base: string, example: WorkedExample, tail = ''): string {
  return `${base}/api/collections/${example.collection.slug}/datasets/${example.dataset.slug}${tail}`;
}

/** The example over one source, when it has a text column and a query could read it. */
function exampleOver(index: CatalogIndex, collection: CollectionModel, dataset: DatasetModel, file: FileModel, source: SourceModel): WorkedExample | undefined {
  const columns = source.metadata?.columns ?? [];
  const text = columns.find((column) => column.name === 'name' && column.type === 'string') ?? columns.find((column) => column.type === 'string');
  if (!text || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(text.name)) return undefined;
  const reference: SourceReference = {
    alias: aliasFor(file.slug),
    collection_id: collection.id,
    dataset_id: dataset.id,
    file_id: file.id,
    file_source_id: source.id,
  };
  if (!isQueryable(index, reference)) return undefined;
  return {
    collection, dataset, file, source,
    column: text.name,
    geometryColumn: columns.find((column) => column.type === 'geometry')?.name,
    query: { sources: [reference], sql: `SELECT ${text.name} FROM ${reference.alias} ORDER BY ${text.name}`, limit: EXAMPLE_PAGE_SIZE },
  };
}

/** A table name for the SQL from a file slug: `countries-110m` → `countries_110m`. */
function aliasFor(slug: string): string {
  const alias = slug.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 63);
  return /^[A-Za-z_]/.test(alias) ? alias : `t_${alias.slice(0, 61)}`;
}

/** Whether the query service would read this source (GeoParquet, stored in the data folder): its own check, not a copy. */
function isQueryable(index: CatalogIndex, reference: SourceReference): boolean {
  try {
    resolveSources(index, '', [reference]);
    return true;
  } catch {
    return false;
  }
}
