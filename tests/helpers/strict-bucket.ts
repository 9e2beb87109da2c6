import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A bucket stand-in that records what it is asked for. */
export interface StrictBucket {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Every request's path and query, as received. */
  asked: string[];
  close: () => Promise<void>;
}

/**
 * Serves a few objects as S3 does for an anonymous reader that may not list the bucket: 403 AccessDenied for
 * every key it does not hold (s3rver answers 404), so an edge must take a 403 as "missing" too.
 * @example const bucket = await startStrictBucket({ '/b/v1/404.html': { type: 'text/html', body: '…' } });
 */
export async function startStrictBucket(objects: Record<string, { type: string; body: string }>): Promise<StrictBucket> {
  const asked: string[] = [];
  const server = createServer((request, response) => {
    asked.push(request.url ?? '');
    const object = objects[new URL(request.url ?? '/', 'http://bucket').pathname];
    if (!object) {
      response.writeHead(403, { 'content-type': 'application/xml' });
      return void response.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>');
    }
    response.writeHead(200, { 'content-type': object.type, 'x-amz-meta-sha256': 'f'.repeat(64), 'x-amz-request-id': 'TEST' });
    response.end(object.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    asked,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
