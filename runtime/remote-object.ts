import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { StorageLocationModel } from '../core/model.ts';
import { createS3Client, errorName } from './s3-client.ts';
import { SHAPEFILE_PARTS } from './source-files.ts';

/**
 * A data file in object storage, read in byte ranges without downloading it: through the S3 API for a storage
 * location with `backend_type: s3` (its `bucket`, its `endpoint_url` or the AWS variables' endpoint, the AWS
 * credentials), over HTTP(S) with Range requests for `backend_type: http` (its `base_url`). Credentials stay in
 * the client; `where` and every error name the object by its address only.
 */
export interface RemoteObject {
  /** `s3://bucket/key`, or the object's URL: what messages name. */
  where: string;
  /** Size and version of the object; throws `RemoteReadError` when it cannot be read. */
  head: () => Promise<RemoteVersion>;
  /** `length` bytes from `start`; throws `RemoteReadError`. */
  read: (start: number, length: number) => Promise<Uint8Array>;
  /** Bytes read by `read` so far. */
  bytesRead: () => number;
  /** Writes the whole object to `file` and answers its version as it was read; throws `RemoteReadError`. */
  download: (file: string) => Promise<RemoteVersion>;
}

/** What identifies the bytes of a remote object: a change of any of these is a change of the data. */
export interface RemoteVersion {
  size: number;
  etag: string;
  lastModified: string;
}

/** Why a remote object could not be read, in one line without credentials. */
export class RemoteReadError extends Error {
  override name = 'RemoteReadError';
  /** The store answered that the object does not exist (404), rather than failing to answer. */
  readonly missing: boolean;

  constructor(message: string, options: { missing?: boolean } = {}) {
    super(message);
    this.missing = options.missing ?? false;
  }
}

/** Clients by endpoint, access key and region, shared by the objects of one process: each holds a pool of connections. */
const clients = new Map<string, S3Client>();

/**
 * Opens the object of a source in its storage location: for S3 the key is the source path, in `bucket`; for HTTP
 * the URL is `base_url` and the path. Throws `RemoteReadError` for a backend that cannot be read this way.
 */
export function openRemoteObject(location: StorageLocationModel, path: string, env: NodeJS.ProcessEnv = process.env): RemoteObject {
  const config = location.config;
  if (location.backend_type === 's3') {
    const { client, bucket, endpoint } = s3Of(location, env);
    return s3Object(client, bucket, path, endpoint);
  }
  if (location.backend_type === 'http') {
    if (!config?.base_url) throw new RemoteReadError(`storage location "${location.slug}" has no base_url`);
    return httpObject(`${config.base_url}/${path.split('/').map(encodeURIComponent).join('/')}`);
  }
  throw new RemoteReadError(`storage location "${location.slug}" is ${location.backend_type}, which geoshelf does not read yet (s3 and http are read)`);
}

/** A part of a source made of several objects, under the name it has in the source's download (source-files.ts). */
export interface RemotePart {
  name: string;
  /** Its path inside the storage location, as a source's `path` would name it. */
  path: string;
  object: RemoteObject;
}

/**
 * The objects of a shapefile (its `.shp` and the sidecars of the same stem) or of a File Geodatabase (every
 * object under its folder), named as `listSourceFiles` names the local files. Through S3 they are listed; over
 * HTTP a shapefile's sidecars are asked for one by one, with the case of the `.shp`'s extension, and a folder
 * cannot be listed. Throws `RemoteReadError`, also when nothing is there.
 */
export async function listRemoteParts(location: StorageLocationModel, path: string, formatType: string, env: NodeJS.ProcessEnv = process.env): Promise<RemotePart[]> {
  const folder = formatType === 'file_geodatabase';
  const stem = folder ? '' : path.replace(/\.shp$/i, '');
  const ofShapefile = (name: string) => SHAPEFILE_PARTS.includes(name.slice(stem.length).toLowerCase()) || name.slice(stem.length).toLowerCase() === '.shp';
  if (location.backend_type === 's3') {
    const { client, bucket, endpoint } = s3Of(location, env);
    const prefix = folder ? `${path}/` : stem;
    const keys = (await listKeys(client, bucket, prefix, endpoint)).map((entry) => entry.key);
    const parts = folder ? keys : keys.filter(ofShapefile);
    if (!folder && !parts.includes(path)) throw new RemoteReadError(`s3://${bucket}/${path} does not exist (at ${endpoint})`, { missing: true });
    if (parts.length === 0) throw new RemoteReadError(`s3://${bucket}/${prefix} holds no objects (at ${endpoint})`);
    const base = path.split('/').at(-1)!;
    const named = parts.map((key) => ({ name: folder ? `${base}/${key.slice(prefix.length)}` : key.split('/').at(-1)!, path: key, object: s3Object(client, bucket, key, endpoint) }));
    return sortParts(named, folder ? undefined : path.split('/').at(-1)!);
  }
  if (folder) throw new RemoteReadError(`"${path}" is a File Geodatabase, a folder, which cannot be listed over HTTP (storage location "${location.slug}"); keep it in a location with backend_type s3`);
  const upper = /\.SHP$/.test(path);
  const main = openRemoteObject(location, path, env);
  const found: RemotePart[] = [{ name: path.split('/').at(-1)!, path, object: main }];
  for (const part of SHAPEFILE_PARTS) {
    const partPath = `${stem}${upper ? part.toUpperCase() : part}`;
    const object = openRemoteObject(location, partPath, env);
    const there = await object.head().then(() => true, (error: unknown) => {
      if (error instanceof RemoteReadError && error.missing) return false;
      throw error;
    });
    if (there) found.push({ name: partPath.split('/').at(-1)!, path: partPath, object });
  }
  return found;
}

/** An object listed under a prefix: its key, size and when it was last written. */
export interface ListedObject {
  key: string;
  size: number;
  lastModified: Date;
}

/**
 * Every object whose key starts with `prefix` in an s3 location's bucket, in key order. Throws `RemoteReadError`
 * for a location that is not s3 (HTTP cannot list) and when the bucket cannot be listed.
 */
export async function listRemoteObjects(location: StorageLocationModel, prefix: string, env: NodeJS.ProcessEnv = process.env): Promise<ListedObject[]> {
  if (location.backend_type !== 's3') throw new RemoteReadError(`storage location "${location.slug}" is ${location.backend_type}, which cannot be listed (s3 can)`);
  const { client, bucket, endpoint } = s3Of(location, env);
  return listKeys(client, bucket, prefix, endpoint);
}

async function listKeys(client: S3Client, bucket: string, prefix: string, endpoint: string): Promise<ListedObject[]> {
  const listed: ListedObject[] = [];
  let token: string | undefined;
  try {
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const entry of page.Contents ?? []) if (entry.Key) listed.push({ key: entry.Key, size: entry.Size ?? 0, lastModified: entry.LastModified ?? new Date(0) });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (error) {
    throw explainS3(error, `s3://${bucket}/${prefix}`, bucket, endpoint);
  }
  return listed;
}

/** Parts in the order `listSourceFiles` gives: the `.shp` first, then its sidecars in SHAPEFILE_PARTS order; a folder's by name. */
function sortParts(parts: RemotePart[], shp: string | undefined): RemotePart[] {
  if (shp === undefined) return parts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const stem = shp.slice(0, -'.shp'.length);
  const rank = (name: string) => (name === shp ? -1 : SHAPEFILE_PARTS.indexOf(name.slice(stem.length).toLowerCase()));
  return parts.filter((part) => part.name === shp || rank(part.name) >= 0).sort((a, b) => rank(a.name) - rank(b.name));
}

/** The client, bucket and endpoint name of an s3 location. */
function s3Of(location: StorageLocationModel, env: NodeJS.ProcessEnv): { client: S3Client; bucket: string; endpoint: string } {
  const config = location.config;
  if (!config?.bucket) throw new RemoteReadError(`storage location "${location.slug}" has backend_type s3 but no bucket`);
  // Keys given in the variables are fixed in a client: another key or region needs a client of its own.
  const clientKey = JSON.stringify([config.endpoint_url ?? '', env.AWS_ACCESS_KEY_ID ?? '', env.AWS_REGION ?? '']);
  const client = clients.get(clientKey) ?? createS3Client(env, config.endpoint_url);
  clients.set(clientKey, client);
  return { client, bucket: config.bucket, endpoint: endpointName(config.endpoint_url ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL) };
}

function endpointName(endpoint: string | undefined): string {
  if (!endpoint) return 'AWS S3';
  try {
    return new URL(endpoint).origin;
  } catch {
    return 'the configured endpoint';
  }
}

function s3Object(client: S3Client, bucket: string, key: string, endpoint: string): RemoteObject {
  const where = `s3://${bucket}/${key}`;
  let bytes = 0;
  const explain = (error: unknown) => explainS3(error, where, bucket, endpoint);
  return {
    where,
    head: async () => {
      const answer = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).catch((error: unknown) => {
        throw explain(error);
      });
      return { size: answer.ContentLength ?? 0, etag: answer.ETag ?? '', lastModified: answer.LastModified?.toISOString() ?? '' };
    },
    read: async (start, length) => {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${start + length - 1}` }));
        const body = await answer.Body!.transformToByteArray();
        bytes += body.byteLength;
        return body;
      } catch (error) {
        throw explain(error);
      }
    },
    bytesRead: () => bytes,
    download: async (file) => {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        await pipeline(answer.Body as Readable, createWriteStream(file));
        return { size: answer.ContentLength ?? 0, etag: answer.ETag ?? '', lastModified: answer.LastModified?.toISOString() ?? '' };
      } catch (error) {
        throw explain(error);
      }
    },
  };
}

/** An S3 error in one line without credentials. */
function explainS3(error: unknown, where: string, bucket: string, endpoint: string): RemoteReadError {
  const name = errorName(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  const code = (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
  if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) return new RemoteReadError(`${where} does not exist (HTTP 404 at ${endpoint})`, { missing: true });
  if (name === 'NoSuchBucket') return new RemoteReadError(`the bucket ${bucket} does not exist (at ${endpoint})`);
  if (name === 'AccessDenied' || name === 'InvalidAccessKeyId' || name === 'SignatureDoesNotMatch' || status === 403) return new RemoteReadError(`access denied reading ${where} (HTTP 403 at ${endpoint}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`);
  if (name === 'CredentialsProviderError') return new RemoteReadError(`no AWS credentials to read ${where}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile)`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new RemoteReadError(`cannot resolve the host of ${endpoint} (DNS: ${code}) to read ${where}`);
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || name === 'TimeoutError') return new RemoteReadError(`cannot reach ${endpoint} (${code ?? name}) to read ${where}`);
  return new RemoteReadError(`reading ${where} failed: ${name ?? 'error'}${status ? ` (HTTP ${status})` : ''}`);
}

function httpObject(url: string): RemoteObject {
  const where = url;
  let bytes = 0;
  // A range or HEAD that takes half a minute is a store that is down; a whole file may take longer.
  const request = async (init: RequestInit, timeoutMs = 30_000): Promise<Response> => {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const code = (error as { cause?: { code?: string } })?.cause?.code ?? (error as Error).name;
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') throw new RemoteReadError(`cannot resolve the host of ${url} (DNS: ${code})`);
      throw new RemoteReadError(`cannot reach ${url} (${code})`);
    }
    if (response.ok) return response;
    await response.body?.cancel();
    if (response.status === 404) throw new RemoteReadError(`${url} does not exist (HTTP 404)`, { missing: true });
    if (response.status === 401 || response.status === 403) throw new RemoteReadError(`access denied reading ${url} (HTTP ${response.status})`);
    throw new RemoteReadError(`reading ${url} failed (HTTP ${response.status})`);
  };
  return {
    where,
    head: async () => {
      const response = await request({ method: 'HEAD' });
      const size = Number(response.headers.get('content-length'));
      if (!Number.isFinite(size) || !response.headers.get('content-length')) throw new RemoteReadError(`${url} answers HEAD without a Content-Length, so it cannot be read in ranges`);
      return { size, etag: response.headers.get('etag') ?? '', lastModified: response.headers.get('last-modified') ?? '' };
    },
    read: async (start, length) => {
      const response = await request({ headers: { range: `bytes=${start}-${start + length - 1}` } });
      if (response.status !== 206) {
        await response.body?.cancel();
        throw new RemoteReadError(`${url} does not answer Range requests (HTTP ${response.status} instead of 206)`);
      }
      const body = new Uint8Array(await response.arrayBuffer());
      bytes += body.byteLength;
      return body;
    },
    bytesRead: () => bytes,
    download: async (file) => {
      const response = await request({}, 3_600_000);
      try {
        await pipeline(Readable.fromWeb(response.body! as import('node:stream/web').ReadableStream), createWriteStream(file));
      } catch (error) {
        throw new RemoteReadError(`reading ${url} broke off (${(error as Error).message.split('\n')[0]})`);
      }
      return { size: Number(response.headers.get('content-length') ?? 0), etag: response.headers.get('etag') ?? '', lastModified: response.headers.get('last-modified') ?? '' };
    },
  };
}
