import { request as httpRequest } from 'node:http';
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

/** What {@link postQueryFrom} answers: the status, Retry-After and the JSON body. */
export interface SocketAnswer {
  status: number;
  retryAfter: string | undefined;
  body: { code?: string; message?: string };
}

/**
 * POSTs a query body to a listening server over a real socket from a given local address (127.0.0.0/8 is all
 * loopback), so that the server sees it as that client; `headers` go on top (an X-Forwarded-For, say).
 */
export function postQueryFrom(origin: string, localAddress: string, body: unknown, headers: Record<string, string> = {}): Promise<SocketAnswer> {
  const text = JSON.stringify(body);
  const { port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, localAddress, method: 'POST', path: '/api/queries', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } }, (incoming) => {
      let answer = '';
      incoming.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk)).on('end', () => {
        resolve({ status: incoming.statusCode!, retryAfter: incoming.headers['retry-after'], body: JSON.parse(answer) as SocketAnswer['body'] });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(text);
  });
}

/**
 * Resolves once one answer of a burst is `shed`: the burst has reached the query pool and its client's share is
 * full. A fixed pause is not enough, as on a busy machine the burst may not have arrived yet; rejects if no answer
 * of the burst was shed.
 */
export function untilShed<T>(burst: Promise<T>[], shed: (answer: T) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    for (const answer of burst) answer.then((value) => shed(value) && resolve(), reject);
    Promise.all(burst).then(() => reject(new Error('the pool shed no query of the burst')), reject);
  });
}
