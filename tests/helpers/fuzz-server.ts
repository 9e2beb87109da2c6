import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Config } from '../../runtime/config.ts';
import { ROOT } from './catalog.ts';
import { TEST_KEYS } from './queries.ts';
import { findFreePort } from './web-app.ts';

/** A request as the fuzzer sends it: the raw request target is kept byte for byte (no URL normalisation). */
export interface FuzzRequest {
  method: string;
  /** Raw request target: path and query string exactly as written on the request line. */
  target: string;
  headers: Record<string, string>;
  body?: string;
}

/** What came back: the status, headers (lower-case names) and the decoded body bytes. */
export interface FuzzResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A server in a child process, started the way `npm run serve` starts it. */
export interface ChildServer {
  origin: string;
  pid: number;
  /** Resident set size of the server process in bytes, from /proc/<pid>/status. */
  rssBytes: () => number;
  /** Whether the process is still running. */
  alive: () => boolean;
  /** What the process printed to stderr (unexpected errors are logged there). */
  stderr: () => string;
  close: () => Promise<void>;
}

/**
 * Starts `npm run serve` over a built `dist/` as a child process, on a free port, with the MCP rate bound off (the
 * fuzzer sends hundreds of calls a second from one address). The `serve` script's own command line is run with
 * this Node binary, rather than through npm, so that the pid measured is the server's and not npm's.
 */
export async function startChildServer(config: Pick<Config, 'distDir' | 'dataDir' | 'catalogDir'>, options: { env?: Record<string, string>; nodeArgs?: string[] } = {}): Promise<ChildServer> {
  const port = await findFreePort();
  const origin = `http://127.0.0.1:${port}`;
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const [, ...args] = scripts.serve!.split(' ');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      HOST: '127.0.0.1', PORT: String(port), GEOSHELF_BASE_URL: origin,
      GEOSHELF_DIST_DIR: config.distDir, GEOSHELF_DATA_DIR: config.dataDir, GEOSHELF_CATALOG_DIR: config.catalogDir,
      GEOSHELF_QUERY_KEYS: TEST_KEYS, GEOSHELF_MCP_RATE: '0', CI: '1',
      ...options.env,
    },
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-20_000); });
  await waitForListening(child, () => stderr);
  const pid = child.pid!;
  return {
    origin,
    pid,
    rssBytes: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024,
    alive: () => child.exitCode === null && child.signalCode === null,
    stderr: () => stderr,
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function waitForListening(child: ChildProcess, stderr: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('geoshelf is serving')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${stdout}\n${stderr()}`)));
  });
}

/**
 * Sends one request with node:http, so that hostile request targets (`..`, bad percent-encoding, `#`) reach the
 * server as written. Characters that cannot go on a request line (spaces, controls, non-Latin-1) are
 * percent-encoded first; compressed bodies are decoded.
 */
export function send(origin: string, request: FuzzRequest, timeoutMs = 30_000): Promise<FuzzResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    // Node frames a body of DELETE or OPTIONS neither by length nor chunked unless told, so its length is always given.
    const headers = request.body === undefined ? request.headers : { 'content-length': String(Buffer.byteLength(request.body)), ...request.headers };
    const outgoing = httpRequest({ hostname, port, method: request.method, path: requestLine(request.target), headers, timeout: timeoutMs }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(incoming.headers)) headers[name] = [value ?? ''].flat().join(', ');
        resolve({ status: incoming.statusCode ?? 0, headers, body: decode(Buffer.concat(chunks), headers['content-encoding']) });
      });
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** The request target as node:http accepts it: bytes outside 0x21–0x7e percent-encoded as UTF-8. */
export function requestLine(target: string): string {
  return target.replace(/[^\x21-\x7e]/gu, (character) => [...Buffer.from(character, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

/** The path the server reads from a request target: as sent on the wire, then parsed as a URL (dot segments resolved, fragment dropped). */
export function wirePathname(target: string): string {
  return new URL(requestLine(target), 'http://localhost').pathname;
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  if (body.length === 0) return body;
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'gzip') return gunzipSync(body);
  return body;
}

/** A command line that replays a request, for failure messages. */
export function describeRequest(origin: string, request: FuzzRequest): string {
  const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  const headers = Object.entries(request.headers).map(([name, value]) => ` -H ${quote(`${name}: ${value}`)}`).join('');
  const body = request.body === undefined ? '' : ` --data-binary ${quote(request.body.length > 2000 ? `${request.body.slice(0, 2000)}…` : request.body)}`;
  return `curl -s -i --path-as-is -X ${request.method} ${quote(origin + requestLine(request.target))}${headers}${body}`;
}
