import { join } from 'node:path';
import type { CatalogIndex } from '../core/catalog-index.ts';
import { REMOTE_BACKENDS } from '../core/constants.ts';
import type { StorageLocationModel } from '../core/model.ts';
import type { QueryRequest } from '../schemas/query.ts';
import { describeQueryError, QueryFailure, queryFailure } from './errors.ts';
import type { ResolvedSource } from './protocol.ts';

/**
 * Hex digits of a file's SHA-256 kept as its version: 48 bits miss a change of the data once in 2^48, and keep
 * the largest token (8 sources, 8 KiB of SQL) under 12 KB.
 */
const VERSION_DIGITS = 12;

/** Options of {@link resolveSources}. */
export interface ResolveOptions {
  /**
   * The references come from a query that ran before (a token): a source that is gone is said to be no longer in
   * the catalog, since the client named it right when the query was made.
   */
  ranBefore?: boolean;
}

/** Formats a query can read. */
const QUERYABLE_FORMATS = new Set(['geoparquet']);

/**
 * Resolves each source reference to its collection → dataset → file → source chain in the catalog and to a
 * file in the data folder. A chain that does not exist is `source_not_found`; a source that exists but cannot be
 * queried (another format, or stored elsewhere) is `source_not_queryable`.
 */
export function resolveSources(index: CatalogIndex, dataDir: string, references: QueryRequest['sources'], options: ResolveOptions = {}): ResolvedSource[] {
  const aliases = new Set<string>();
  return references.map((reference, position) => {
    const where = `sources[${position}]`;
    const gone = options.ranBefore ? `${where} of this query is no longer in the catalog` : where;
    if (aliases.has(reference.alias.toLowerCase())) throw queryFailure('duplicate_alias', where, reference.alias);
    aliases.add(reference.alias.toLowerCase());
    const found = index.datasetsById.get(reference.dataset_id);
    if (!found || found.collection.id !== reference.collection_id) {
      throw queryFailure('source_not_found', gone, `collection ${reference.collection_id} has no dataset ${reference.dataset_id}`);
    }
    const file = found.dataset.files.find((candidate) => candidate.id === reference.file_id);
    if (!file) throw queryFailure('source_not_found', gone, `dataset ${reference.dataset_id} has no file ${reference.file_id}`);
    for (const link of file.formats) {
      const source = link.sources.find((candidate) => candidate.id === reference.file_source_id);
      if (!source) continue;
      const format = index.formatsById.get(link.format_id);
      if (!format || !QUERYABLE_FORMATS.has(format.format_type)) {
        throw queryFailure('source_not_queryable', where, `source ${source.id} is ${format?.name ?? 'in another format'}; queries read GeoParquet sources.`);
      }
      const location = source.storage_location_id === null ? undefined : index.storageById.get(source.storage_location_id);
      if (source.location.type === 'file' && location && !source.url?.startsWith(`${index.settings.storageBaseUrl}/`) && REMOTE_BACKENDS.has(location.backend_type)) {
        return { alias: reference.alias, path: '', version: '', remote: { location, path: source.location.path } };
      }
      if (source.location.type !== 'file' || !source.url?.startsWith(`${index.settings.storageBaseUrl}/`)) {
        throw queryFailure('source_not_queryable', where, `source ${source.id} is not stored where this service can read it.`);
      }
      return { alias: reference.alias, path: join(dataDir, source.location.path), version: source.stored?.sha256.slice(0, VERSION_DIGITS) ?? '' };
    }
    throw queryFailure('source_not_found', gone, `file ${reference.file_id} has no source ${reference.file_source_id}`);
  });
}

/**
 * Checks that each source holds the data a query ran on (`versions`, from its token): after a rebuild over new
 * data, an old token's pages, bounds and tiles are refused with `query_outdated` rather than answered from the
 * new rows. A token without versions (made before tokens kept them) cannot be checked, so it is refused too.
 */
export function checkSameData(sources: ResolvedSource[], versions: string[] | undefined): void {
  if (versions?.length !== sources.length || sources.some((source, index) => source.version !== versions[index])) throw queryFailure('query_outdated');
}

/**
 * Puts a local copy under each source in object storage (`RemoteFileCache`) and gives it the copy's path and
 * version. A copy that is not ready by `deadline` (ms, `performance.now()`) is `source_unavailable` with
 * Retry-After: the fetch goes on, and a query that comes back finds it. A store that cannot be read is
 * `source_unavailable` too, with the reason the server logs; the answer never names the store.
 */
export async function fetchRemoteSources(sources: ResolvedSource[], cache: RemoteCopies, deadline: number, warn: (message: string) => void): Promise<void> {
  const remote = sources.filter((source) => source.remote);
  if (remote.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, deadline - performance.now()));
  });
  try {
    const copies = Promise.all(remote.map(async (source) => {
      const copy = await cache.get(source.remote!.location, source.remote!.path);
      source.path = copy.file;
      source.version = copy.version;
    }));
    copies.catch(() => undefined);
    const outcome = await Promise.race([copies.then(() => 'ready' as const), late]).catch((error: unknown) => {
      warn(`a remote source cannot be read: ${(error as Error).message}`);
      throw new QueryFailure({ ...describeQueryError('source_unavailable'), message: 'The data file of this source is in object storage, which cannot be read right now. Other sources are unaffected.' });
    });
    if (outcome === 'late') {
      throw new QueryFailure({ ...describeQueryError('source_unavailable'), message: 'The data file of this source is being fetched from object storage; retry shortly.', hint: 'The first query of a remote file waits for its copy; the fetch goes on, and a later query finds it.' }, REMOTE_RETRY_AFTER_S);
    }
  } finally {
    clearTimeout(timer);
  }
}

/** Retry-After while a remote file is being fetched. */
const REMOTE_RETRY_AFTER_S = 5;

/** What `fetchRemoteSources` needs of the cache of remote files. */
export interface RemoteCopies {
  get: (location: StorageLocationModel, path: string) => Promise<{ file: string; version: string }>;
}
