import type { Config } from '../../runtime/config.ts';
import { createServer, type GeoshelfServer } from '../../server/app.ts';
import { sampleConfig } from './sample.ts';

/** A fixed token key, so two servers in a test share it. */
export const TEST_KEYS = 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE';

/** A server over the sample build with the query service, and overrides for limits. */
export function queryServer(overrides: Partial<Config> = {}): GeoshelfServer {
  return createServer({ config: { ...sampleConfig(), queryKeys: TEST_KEYS, queryTimeoutMs: 4000, ...overrides } });
}

/** A source reference to the GeoParquet source of a file, by slugs, with the ids the catalog gave it. */
export function sourceRef(server: GeoshelfServer, alias: string, collection: string, dataset: string, file: string, options: { version?: string; format?: string } = {}) {
  const index = server.snapshot().context.index;
  const entry = index.collections.get(collection)!;
  const found = entry.datasetsBySlug.get(dataset)!;
  const target = found.files.find((candidate) => candidate.slug === file)!;
  const link = target.formats.find((candidate) => index.formatsById.get(candidate.format_id)!.format_type === (options.format ?? 'geoparquet'))!;
  const source = options.version ? link.sources.find((candidate) => candidate.version === options.version)! : link.sources[0]!;
  return { alias, collection_id: entry.collection.id, dataset_id: found.id, file_id: target.id, file_source_id: source.id };
}

/** POSTs JSON (or raw text) to the server. */
export async function post(server: GeoshelfServer, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return server.fetch(new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  }));
}

/** GETs a path with the token header. */
export async function getWithToken(server: GeoshelfServer, path: string, token: string | undefined): Promise<Response> {
  return server.fetch(new Request(`http://localhost${path}`, { headers: token ? { 'x-service-query-token': token } : {} }));
}
