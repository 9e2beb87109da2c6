import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { build } from 'rolldown';
import { readManifest } from '../../runtime/manifest.ts';
import { ROOT } from './catalog.ts';

/** The example Worker of docs/, bundled with its `core/` imports into one ES module, as wrangler would. */
export async function bundleWorker(): Promise<string> {
  const { output } = await build({ input: join(ROOT, 'docs/cloudflare-worker.ts'), platform: 'browser', write: false, output: { format: 'esm' } });
  return output[0].code;
}

/**
 * The call of miniflare's R2 bucket the fill makes. Its own types need @cloudflare/workers-types, which is not
 * installed, so they are written out here.
 */
interface Bucket {
  put(key: string, value: Uint8Array, options: { httpMetadata: Record<string, string>; customMetadata: Record<string, string> }): Promise<unknown>;
}

/** The bucket a worker of `mf` is bound to as `BUCKET`, to fill from Node. */
export async function getBucket(mf: Miniflare, workerName: string): Promise<Bucket> {
  return (await mf.getR2Bucket('BUCKET', workerName)) as unknown as Bucket;
}

/** Sends a request to one worker of `mf` (not the first) with miniflare's fetch. */
export async function fetchWorker(mf: Miniflare, workerName: string, url: string): Promise<Response> {
  const worker = (await mf.getWorker(workerName)) as unknown as { fetch(url: string): Promise<Response> };
  return worker.fetch(url);
}

/** Options of fillBucket: the built tree, the data folder, the key prefix and the documents' max-age. */
export interface FillOptions {
  distDir: string;
  dataDir: string;
  prefix: string;
  maxAge: number;
  /** Data files to put under `data/` (paths in the data folder). */
  dataFiles: string[];
}

/** The objects of the publish layout: every manifest key, its `.br`/`.gz` siblings, the given data files, then the manifest. */
export async function fillBucket(bucket: Bucket, options: FillOptions): Promise<number> {
  const manifest = (await readManifest(options.distDir))!;
  const cacheControl = (key: string) => (key.startsWith('_site/assets/') ? 'public, max-age=31536000, immutable' : `public, max-age=${options.maxAge}`);
  const objects: { key: string; file: string; contentType: string; contentEncoding?: string; sha256: string }[] = [];
  for (const [key, entry] of Object.entries(manifest.files)) {
    const file = join(options.distDir, key);
    objects.push({ key, file, contentType: entry.type, sha256: entry.sha256 });
    if (entry.br !== undefined) objects.push({ key: `${key}.br`, file: `${file}.br`, contentType: entry.type, contentEncoding: 'br', sha256: entry.sha256 });
    if (entry.gz !== undefined) objects.push({ key: `${key}.gz`, file: `${file}.gz`, contentType: entry.type, contentEncoding: 'gzip', sha256: entry.sha256 });
  }
  for (const path of options.dataFiles) {
    const file = join(options.dataDir, path);
    objects.push({ key: `data/${path}`, file, contentType: 'application/vnd.apache.parquet', sha256: hash('sha256', await readFile(file), 'hex') });
  }
  objects.push({ key: 'manifest.json', file: join(options.distDir, 'manifest.json'), contentType: 'application/json', sha256: hash('sha256', await readFile(join(options.distDir, 'manifest.json')), 'hex') });
  for (const object of objects) {
    const httpMetadata = { contentType: object.contentType, cacheControl: cacheControl(object.key), ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}) };
    await bucket.put(options.prefix + object.key, await readFile(object.file), { httpMetadata, customMetadata: { sha256: object.sha256 } });
  }
  return objects.length;
}

/** A response as it came over the wire: status, headers and the body bytes, still encoded. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Sends one request with Node's http client, which (unlike fetch) leaves a brotli or gzip body as it was sent. */
export function sendRaw(url: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}
