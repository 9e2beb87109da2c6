import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, type HeadObjectCommandOutput } from '@aws-sdk/client-s3';
import { createInterface } from 'node:readline';

/** s3rver's fixed credentials: it checks request signatures against them. */
const ACCESS_KEY = 'S3RVER';

/** A real S3 API on a free local port, with one empty bucket, and an SDK client reading it as a user would. */
export interface TestBucket {
  /** The store's HTTP origin, for AWS_ENDPOINT_URL. */
  endpoint: string;
  bucket: string;
  /** AWS_* variables that point the publish at this store. */
  env: Record<string, string>;
  client: S3Client;
  /** Every key under `prefix`, sorted. */
  keys: (prefix: string) => Promise<string[]>;
  head: (key: string) => Promise<HeadObjectCommandOutput | undefined>;
  read: (key: string) => Promise<Buffer | undefined>;
  stop: () => Promise<void>;
}

const SCRIPT = new URL('./s3rver-process.ts', import.meta.url).pathname;

/** Starts s3rver in a process of its own on a temporary folder, with a bucket named `bucket`. */
export async function startBucket(bucket = 'geoshelf-site'): Promise<TestBucket> {
  const directory = await mkdtemp(join(tmpdir(), 'geoshelf-s3-'));
  const server = spawn(process.execPath, ['--openssl-legacy-provider', SCRIPT, directory, bucket], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await Promise.race([
    once(createInterface({ input: server.stdout! }), 'line'),
    once(server, 'exit').then(([code]) => { throw new Error(`s3rver exited with ${code} before listening`); }),
  ])) as [string];
  const { port } = JSON.parse(line) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const env = { AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: ACCESS_KEY, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: endpoint };
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: ACCESS_KEY } });
  const missing = (error: unknown) => {
    const name = (error as { name?: string }).name;
    if (name === 'NotFound' || name === 'NoSuchKey') return undefined;
    throw error;
  };
  return {
    endpoint, bucket, env, client,
    keys: async (prefix) => {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
        keys.push(...(page.Contents ?? []).map((object) => object.Key!));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    head: (key) => client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).catch(missing),
    read: async (key) => {
      const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key })).catch(missing);
      return answer ? Buffer.from(await answer.Body!.transformToByteArray()) : undefined;
    },
    stop: async () => {
      client.destroy();
      if (server.exitCode === null) {
        server.kill('SIGTERM');
        await once(server, 'exit');
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
}
