/**
 * `npm run cdn`: a CDN stand-in. Debian's nginx runs docs/cdn-nginx.conf, the edge configuration users copy, in
 * front of a bucket holding a published tree and a geoshelf server (the origin) for what the bucket cannot answer.
 * It prints its URL, and SIGINT or SIGTERM stops nginx and removes its scratch folder. `geoshelf cdn`
 * (cli/serve-commands.ts) reads the command line; `node deploy/cdn.ts` runs `geoshelf cdn`.
 *
 * @example npm run cdn -- --bucket-url http://127.0.0.1:9000/site/v1 --origin http://127.0.0.1:3000
 * @example npm run cdn -- --bucket-url https://my-bucket.s3.eu-west-1.amazonaws.com/v1 --origin https://query.example.org --port 8088
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCommand, NGINX_MISSING, readLogTail, startNginx } from '../scripts/nginx.ts';
import { exited, prefixOutput, stopWhenOrphaned, waitForAnswer } from '../scripts/processes.ts';
import { EXIT } from '../cli/exit-codes.ts';
import { runAsGeoshelf } from '../cli/run-as-geoshelf.ts';
import { renderCdnConf, type CdnOptions } from './cdn-config.ts';

/** The edge configuration users copy; `npm run cdn` renders it rather than holding a second one. */
export const CDN_TEMPLATE = new URL('../docs/cdn-nginx.conf', import.meta.url);
/** After SIGQUIT, nginx finishes the requests it holds; a download still running past this is cut (SIGTERM). */
const GRACEFUL_STOP_MS = 10_000;

/** Asks for `url` and says in a few words what came back: a status, or why nothing did. */
async function describeAnswer(url: string): Promise<{ ok: boolean; what: string }> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    await response.body?.cancel();
    return { ok: response.ok, what: `HTTP ${response.status}` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { ok: false, what: cause ?? (error as Error).name };
  }
}

/** Warns, without stopping, when the bucket holds no tree or the origin does not answer: the edge still starts. */
async function checkUpstreams(options: CdnOptions): Promise<void> {
  const [bucket, origin] = await Promise.all([describeAnswer(`${options.bucketUrl}/manifest.json`), describeAnswer(`${options.origin}/api/health`)]);
  if (!bucket.ok) console.warn(`⚠ the bucket has no manifest.json at ${options.bucketUrl}/manifest.json (${bucket.what}): publish a tree there (npm run publish) or check --bucket-url`);
  if (!origin.ok) console.warn(`⚠ no geoshelf server answers at ${options.origin} (${origin.what}): until one does, dynamic routes and /api requests with a query string answer 502`);
}

/** Runs nginx until a signal or its own exit; resolves never (the process exits). */
async function runCdn(options: CdnOptions): Promise<void> {
  const siteConf = renderCdnConf(await readFile(CDN_TEMPLATE, 'utf8'), options);
  await checkUpstreams(options);
  const prefix = await mkdtemp(join(tmpdir(), 'geoshelf-cdn-'));
  const removePrefix = () => rmSync(prefix, { recursive: true, force: true });
  let nginx: ChildProcess | undefined;
  let stopping = false;
  // Last resort when this script dies some other way: nginx must not keep the port, nor the folder stay.
  process.on('exit', () => {
    if (nginx?.exitCode === null && nginx.signalCode === null) nginx.kill('SIGTERM');
    removePrefix();
  });
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${reason}: stopping nginx, which finishes the requests it holds`);
    if (nginx) {
      nginx.kill('SIGQUIT');
      const cut = setTimeout(() => nginx?.kill('SIGTERM'), GRACEFUL_STOP_MS);
      await exited(nginx);
      clearTimeout(cut);
    }
    removePrefix();
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop(signal));
  stopWhenOrphaned(() => void stop('the parent process exited'));

  const started = await startNginx(prefix, siteConf, 'npm run cdn (deploy/cdn.ts) around docs/cdn-nginx.conf');
  nginx = started.child;
  prefixOutput(nginx, 'nginx');
  nginx.once('exit', (code) => {
    if (stopping) return;
    const log = readLogTail(started.errorLog);
    console.error([`✖ nginx exited (code ${code}); the end of its log:`, ...log.map((line) => `[nginx] ${line}`)].join('\n'));
    removePrefix();
    process.exit(1);
  });
  // Any answer of nginx's will do (the tree may lack index.html): it is listening.
  await waitForAnswer(`${options.url}/`, 'nginx', { child: nginx, accept: (response) => response.headers.get('server') === 'nginx', timeoutMs: 20_000 });
  console.log(`cdn ready: ${options.url}/ (nginx pid ${nginx.pid}; bucket ${options.bucketUrl}, origin ${options.origin}; configuration and logs in ${prefix})`);
  console.log('Ctrl-C stops it');
}

/** Fails with one line when the address is taken, rather than after nginx's five tries to bind it. */
async function checkPortFree(listen: string): Promise<void> {
  const at = listen.lastIndexOf(':');
  const host = listen.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(listen.slice(at + 1));
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => reject(new Error(error.code === 'EADDRINUSE' ? `${listen} is in use: pick another --port` : `cannot listen on ${listen}: ${error.code ?? error.message}`)));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/**
 * Runs the edge: resolves with 0 once nginx answers (the process then runs until a signal). When it cannot start
 * (no nginx, the port taken, nginx not answering), it says why and exits 1, which stops an nginx already started.
 */
export async function startCdn(options: CdnOptions): Promise<number> {
  try {
    if (!hasCommand('nginx')) throw new Error(NGINX_MISSING);
    await checkPortFree(options.values.listen!);
    await runCdn(options);
    return EXIT.ok;
  } catch (error) {
    console.error(`✖ ${(error as Error).message}`);
    process.exit(EXIT.failed);
  }
}

if (import.meta.main) runAsGeoshelf(['cdn']);
