import { join } from 'node:path';
import type { CatalogIndex } from '../core/catalog-index.ts';
import type { QueryRequest } from '../schemas/query.ts';
import { queryFailure } from './errors.ts';

/** A source a query reads: its alias in the SQL and the local file behind it. Paths never leave the server. */
export interface ResolvedSource {
  alias: string;
  path: string;
}

/** Formats a query can read. */
const QUERYABLE_FORMATS = new Set(['geoparquet']);

/**
 * Resolves each source reference to its collection → dataset → file → source chain in the catalog and to a
 * file in the data folder. A chain that does not exist is `source_not_found`; a source that exists but cannot be
 * queried (another format, or stored elsewhere) is `source_not_queryable`.
 */
export function resolveSources(index: CatalogIndex, dataDir: string, references: QueryRequest['sources']): ResolvedSource[] {
  const aliases = new Set<string>();
  return references.map((reference, position) => {
    const where = `sources[${position}]`;
    if (aliases.has(reference.alias.toLowerCase())) throw queryFailure('duplicate_alias', where, reference.alias);
    aliases.add(reference.alias.toLowerCase());
    const found = index.datasetsById.get(reference.dataset_id);
    if (!found || found.collection.id !== reference.collection_id) {
      throw queryFailure('source_not_found', where, `collection ${reference.collection_id} has no dataset ${reference.dataset_id}`);
    }
    const file = found.dataset.files.find((candidate) => candidate.id === reference.file_id);
    if (!file) throw queryFailure('source_not_found', where, `dataset ${reference.dataset_id} has no file ${reference.file_id}`);
    for (const link of file.formats) {
      const source = link.sources.find((candidate) => candidate.id === reference.file_source_id);
      if (!source) continue;
      const format = index.formatsById.get(link.format_id);
      if (!format || !QUERYABLE_FORMATS.has(format.format_type)) {
        throw queryFailure('source_not_queryable', where, `source ${source.id} is ${format?.name ?? 'in another format'}; queries read GeoParquet sources.`);
      }
      if (source.location.type !== 'file' || !source.url?.startsWith(`${index.settings.storageBaseUrl}/`)) {
        throw queryFailure('source_not_queryable', where, `source ${source.id} is not stored where this service can read it.`);
      }
      return { alias: reference.alias, path: join(dataDir, source.location.path) };
    }
    throw queryFailure('source_not_found', where, `file ${reference.file_id} has no source ${reference.file_source_id}`);
  });
}
