import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { build } from 'rolldown';
import { MANIFEST_KEY, planPublish } from '../../deploy/publish-plan.ts';
import { readPublishedTree } from '../../deploy/published-tree.ts';
import { serializeManifest } from '../../runtime/manifest.ts';
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
interface HttpMetadata {
  contentType: string;
  cacheControl: string;
  contentEncoding?: string;
}
interface Bucket {
  put(key: string, value: Uint8Array, options: { httpMetadata: HttpMetadata; customMetadata: Record<string, string> }): Promise<unknown>;
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
  /** Which data files to put (all 89 of the sample add about 66 MB and 20 s): those whose path starts so. */
  dataUnder: string;
}

/**
 * Puts a built tree into an R2 bucket as `npm run publish` lays it out (deploy/publish-plan.ts decides each
 * object's key, type, encoding, Cache-Control and sha256), the manifest last. R2's S3 API stores those headers as
 * `httpMetadata` and `x-amz-meta-sha256` as `customMetadata.sha256`, which is what this writes directly.
 */
export async function fillBucket(bucket: Bucket, options: FillOptions): Promise<number> {
  const { manifest } = await readPublishedTree(options.distDir, options.dataDir);
  const objects = planPublish(manifest, undefined, { maxAge: options.maxAge }).upload
    .filter((object) => object.from === 'dist' || object.path.startsWith(options.dataUnder));
  const put = async (key: string, bytes: Uint8Array, httpMetadata: HttpMetadata, sha256: string) => {
    await bucket.put(options.prefix + key, bytes, { httpMetadata, customMetadata: { sha256 } });
  };
  const queue = [...objects];
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let object = queue.shift(); object; object = queue.shift()) {
      const bytes = await readFile(join(object.from === 'dist' ? options.distDir : options.dataDir, object.path));
      const encoding = object.contentEncoding ? { contentEncoding: object.contentEncoding } : {};
      await put(object.key, bytes, { contentType: object.contentType, cacheControl: object.cacheControl, ...encoding }, object.sha256);
    }
  }));
  const manifestBytes = new TextEncoder().encode(serializeManifest(manifest));
  await put(MANIFEST_KEY, manifestBytes, { contentType: 'application/json', cacheControl: `public, max-age=${options.maxAge}` }, hash('sha256', manifestBytes, 'hex'));
  return objects.length + 1;
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
