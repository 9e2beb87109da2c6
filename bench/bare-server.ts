import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readManifestSync } from '../runtime/manifest.ts';

/**
 * The ceiling of Node on this machine: a plain node:http server answering the same clean URLs from a Map of
 * bodies, with no routing, negotiation or ETag checks. Used only by the static-read bench.
 */
const distDir = process.env.GEOSHELF_DIST_DIR ?? 'dist';
const manifest = readManifestSync(distDir)!;
const bodies = new Map<string, { bytes: Buffer; type: string }>();
for (const [key, entry] of Object.entries(manifest.files)) {
  if (key.endsWith('/index.json')) bodies.set(`/${key.slice(0, -'/index.json'.length)}`, { bytes: readFileSync(join(distDir, key)), type: entry.type });
}
createServer((request, response) => {
  const body = bodies.get(request.url ?? '');
  if (!body) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'content-type': body.type, 'content-length': body.bytes.length }).end(body.bytes);
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
