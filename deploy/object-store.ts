/**
 * The bucket a publish writes: a prefix of an S3-compatible store, reached with `@aws-sdk/client-s3` and the
 * standard AWS variables. Every failure becomes a one-line `PublishError` that names the bucket and never a secret.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client, type PutObjectCommandInput } from '@aws-sdk/client-s3';
import { createS3Client, errorName } from '../runtime/s3-client.ts';
import { Upload } from '@aws-sdk/lib-storage';
import { PublishError } from './published-tree.ts';

/**
 * Objects larger than this go up in parts, read as a stream, rather than whole in memory (at most 8 × 64 MiB held at
 * once). At 16 MiB, the sample's two objects of 22 and 34 MB went up in parts, each 130 ms slower than one PUT into
 * s3rver and last to finish: a first publish ran at 0.82× a loop of single PUTs, 1.0× with this (BENCHMARKS.md,
 * "Publishing to a bucket"). rclone's cutoff is 200 MiB.
 */
export const MULTIPART_BYTES = 64 * 1024 * 1024;
/** The size of each part above that. */
const PART_BYTES = 16 * 1024 * 1024;

/** `s3://bucket/prefix` split; `prefix` has no slash at either end and may be empty. */
export interface BucketTarget {
  bucket: string;
  prefix: string;
}

/** What to put: a file's bytes with the headers it is stored with. */
export interface PutRequest {
  key: string;
  file: string;
  bytes: number;
  contentType: string;
  cacheControl: string;
  contentEncoding?: string;
  metadata: Record<string, string>;
}

/**
 * Parses a publish target.
 * @example parseTarget('s3://site/v1/') // { bucket: 'site', prefix: 'v1' }
 */
export function parseTarget(target: string): BucketTarget {
  const match = /^s3:\/\/([^/]+)\/*(.*?)\/*$/.exec(target);
  if (!match || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(match[1]!)) throw new PublishError(`the target must be s3://BUCKET[/PREFIX] with a valid bucket name, not ${JSON.stringify(target)}`);
  return { bucket: match[1]!, prefix: match[2]! };
}

/** One prefix of one bucket: read, put, list and delete keys relative to the prefix. */
export class ObjectStore {
  readonly #client: S3Client;
  readonly #target: BucketTarget;
  /** Origin of the custom endpoint, or `AWS S3`, for messages (never its path or credentials). */
  readonly #endpoint: string;

  constructor(target: BucketTarget, env: NodeJS.ProcessEnv = process.env) {
    this.#client = createS3Client(env);
    this.#target = target;
    this.#endpoint = endpointName(env);
  }

  /** The target as the user wrote it, for messages. */
  get name(): string {
    return `s3://${this.#target.bucket}${this.#target.prefix ? `/${this.#target.prefix}` : ''}`;
  }

  #key(key: string): string {
    return this.#target.prefix ? `${this.#target.prefix}/${key}` : key;
  }

  /** The bytes of a key, or undefined when there is no such object. */
  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const answer = await this.#client.send(new GetObjectCommand({ Bucket: this.#target.bucket, Key: this.#key(key) }));
      return await answer.Body!.transformToByteArray();
    } catch (error) {
      if (errorName(error) === 'NoSuchKey') return undefined;
      throw this.#explain(error, `reading ${key}`);
    }
  }

  /** Puts a file: whole when small (so the SDK can retry it), in parts from a stream when large. */
  async put(request: PutRequest): Promise<void> {
    const input: PutObjectCommandInput = {
      Bucket: this.#target.bucket, Key: this.#key(request.key), ContentType: request.contentType, CacheControl: request.cacheControl, Metadata: request.metadata,
      ...(request.contentEncoding ? { ContentEncoding: request.contentEncoding } : {}),
    };
    try {
      if (request.bytes <= MULTIPART_BYTES) {
        const body = await readFile(request.file);
        await this.#client.send(new PutObjectCommand({ ...input, Body: body, ContentLength: body.length }));
      } else {
        await new Upload({ client: this.#client, params: { ...input, Body: createReadStream(request.file) }, partSize: PART_BYTES, queueSize: 2 }).done();
      }
    } catch (error) {
      throw this.#explain(error, `uploading ${request.key}`);
    }
  }

  /** Puts bytes held in memory (the manifest and the publish marker). */
  async putBytes(key: string, body: Uint8Array, contentType: string, cacheControl: string, metadata: Record<string, string> = {}): Promise<void> {
    try {
      await this.#client.send(new PutObjectCommand({ Bucket: this.#target.bucket, Key: this.#key(key), Body: body, ContentLength: body.length, ContentType: contentType, CacheControl: cacheControl, Metadata: metadata }));
    } catch (error) {
      throw this.#explain(error, `uploading ${key}`);
    }
  }

  /** Every key under the prefix (relative to it), page by page; `limit` stops early. */
  async list(limit = Number.POSITIVE_INFINITY): Promise<string[]> {
    const keys: string[] = [];
    const start = this.#target.prefix ? `${this.#target.prefix}/` : '';
    let token: string | undefined;
    try {
      do {
        const page = await this.#client.send(new ListObjectsV2Command({ Bucket: this.#target.bucket, Prefix: start, ContinuationToken: token, MaxKeys: Math.min(1000, limit - keys.length) }));
        for (const object of page.Contents ?? []) keys.push(object.Key!.slice(start.length));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token && keys.length < limit);
    } catch (error) {
      throw this.#explain(error, 'listing the prefix');
    }
    return keys;
  }

  /** Deletes keys, a thousand per request (the S3 limit); a key that is already gone is not an error. */
  async remove(keys: string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += 1000) {
      const batch = keys.slice(start, start + 1000);
      try {
        const answer = await this.#client.send(new DeleteObjectsCommand({ Bucket: this.#target.bucket, Delete: { Objects: batch.map((key) => ({ Key: this.#key(key) })), Quiet: true } }));
        const failed = answer.Errors?.[0];
        if (failed) throw new PublishError(`${this.name}: could not delete ${failed.Key}: ${failed.Code ?? 'error'}${answer.Errors!.length > 1 ? ` (and ${answer.Errors!.length - 1} more)` : ''}`);
      } catch (error) {
        throw this.#explain(error, 'deleting objects');
      }
    }
  }

  /** A one-line message for what went wrong, without the SDK's request details or any credential. */
  #explain(error: unknown, doing: string): PublishError {
    if (error instanceof PublishError) return error;
    const name = errorName(error);
    const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
    const where = this.name;
    if (name === 'CredentialsProviderError' || /credential/i.test(String((error as Error)?.message))) return new PublishError(`no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile) to publish to ${where}`);
    if (name === 'NoSuchBucket') return new PublishError(`the bucket ${this.#target.bucket} does not exist (at ${this.#endpoint})`);
    if (name === 'AccessDenied' || name === 'InvalidAccessKeyId' || name === 'SignatureDoesNotMatch' || status === 403) return new PublishError(`access denied ${doing} in ${where}: check the credentials and that they may read, write, list and delete under the prefix (${name ?? `HTTP ${status}`})`);
    const code = (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || name === 'TimeoutError') return new PublishError(`cannot reach the object store at ${this.#endpoint} (${code ?? name}) while ${doing} in ${where}`);
    // A local file that went away or cannot be read while it was being uploaded: the store is not to blame.
    const path = (error as NodeJS.ErrnoException)?.path;
    if (code && path) return new PublishError(`${where}: ${doing} failed: cannot read ${path} (${code})`);
    return new PublishError(`${where}: ${doing} failed: ${name ?? 'error'}${status ? ` (HTTP ${status})` : ''}`);
  }

}

function endpointName(env: NodeJS.ProcessEnv): string {
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
  if (!endpoint) return 'AWS S3';
  try {
    return new URL(endpoint).origin;
  } catch {
    return 'the configured endpoint';
  }
}
