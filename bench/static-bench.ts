import { spawn, spawnSync, fork, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readManifest } from '../runtime/manifest.ts';
import { benchConfig, median } from './build-bench.ts';
import type { BenchContext } from './run.ts';

/** wrk settings shared by both servers. */
const WRK = { threads: 2, connections: 32, seconds: 10 };

interface WrkResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
}

function parseWrk(output: string): WrkResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
  const latency = (percent: string) => {
    const match = new RegExp(`\\s${percent}%\\s+([\\d.]+)(us|ms|s)`).exec(output);
    if (!match) return Number.NaN;
    const value = Number(match[1]);
    return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  return { requestsPerSecond: rps, p50: latency('50'), p99: latency('99'), non2xx };
}

const ROUNDS = 3;

function summarize(results: WrkResult[]): WrkResult {
  return {
    requestsPerSecond: median(results.map((result) => result.requestsPerSecond)),
    p50: median(results.map((result) => result.p50)),
    p99: median(results.map((result) => result.p99)),
    non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
  };
}

function runWrk(port: number, script: string, seconds = WRK.seconds): WrkResult {
  const result = spawnSync('wrk', [`-t${WRK.threads}`, `-c${WRK.connections}`, `-d${seconds}s`, '--latency', '-s', script, `http://127.0.0.1:${port}/`], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`wrk failed: ${result.stderr}`);
  return parseWrk(result.stdout);
}

function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

async function startServer(distDir: string, port: number, script = './serve.ts'): Promise<ChildProcess> {
  const child = fork(new URL(script, import.meta.url), [], { env: { ...process.env, GEOSHELF_DIST_DIR: distDir, PORT: String(port) }, stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return child;
}

async function startNginx(root: string, distDir: string, port: number): Promise<ChildProcess> {
  const config = join(root, 'nginx.conf');
  await writeFile(config, `user root;
worker_processes auto;
pid ${root}/nginx.pid;
error_log ${root}/nginx-error.log;
daemon off;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  open_file_cache max=10000 inactive=60s;
  types { application/json json; text/plain txt; }
  default_type application/json;
  server {
    listen 127.0.0.1:${port};
    root ${distDir};
    location / {
      try_files $uri $uri/index.json =404;
      add_header Cache-Control "public, max-age=300";
      add_header Access-Control-Allow-Origin *;
    }
  }
}
`);
  const child = spawn('nginx', ['-c', config], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 500));
  return child;
}

/**
 * Static read throughput of server/ against nginx from Debian, both serving the sample dist/ on loopback, with
 * the same wrk settings and the same list of clean URLs (wrk sends no Accept-Encoding, so both send identity).
 */
export async function benchStaticReads(bench: BenchContext): Promise<void> {
  bench.section(`Static reads: server/ against nginx (wrk -t${WRK.threads} -c${WRK.connections} -d${WRK.seconds}s)`);
  if (!has('wrk') || !has('nginx')) {
    bench.report('skipped', '-', 'needs Debian packages: apt-get install -y nginx wrk');
    return;
  }
  const config = benchConfig(bench.root, join(bench.repo, 'catalog-data'), join(bench.repo, 'catalog-data', 'data'), 'sample-dist');
  const manifest = (await readManifest(config.distDir))!;
  const paths = Object.keys(manifest.files)
    .filter((key) => key.endsWith('/index.json') && key.startsWith('api/'))
    .map((key) => `/${key.replace(/\/index\.json$/, '')}`);
  const script = join(bench.root, 'paths.lua');
  await writeFile(script, `local paths = {${paths.map((path) => JSON.stringify(path)).join(',')}}\nlocal i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format("GET", paths[(i % #paths) + 1])\nend\n`);
  const nginx = await startNginx(bench.root, config.distDir, 18_081);
  const server = await startServer(config.distDir, 18_082);
  const bare = await startServer(config.distDir, 18_083, './bare-server.ts');
  try {
    // All are warmed up (the JIT needs it), then measured in alternating rounds; medians damp this machine's noise.
    for (const port of [18_081, 18_082, 18_083]) runWrk(port, script, 5);
    const rounds = Array.from({ length: ROUNDS }, () => ({ nginx: runWrk(18_081, script), server: runWrk(18_082, script), bare: runWrk(18_083, script) }));
    const failed = rounds.flatMap((round) => [round.nginx.non2xx, round.server.non2xx, round.bare.non2xx]).some(Boolean);
    if (failed) throw new Error('a server answered non-2xx during the load test');
    const nginx = summarize(rounds.map((round) => round.nginx));
    const server = summarize(rounds.map((round) => round.server));
    const ratios = rounds.map((round) => round.server.requestsPerSecond / round.nginx.requestsPerSecond);
    bench.report('nginx: requests/s (baseline)', `${Math.round(nginx.requestsPerSecond)}`, `p50 ${nginx.p50.toFixed(2)} ms, p99 ${nginx.p99.toFixed(2)} ms; medians of ${ROUNDS} rounds over ${paths.length} URLs`);
    bench.report('server/: requests/s', `${Math.round(server.requestsPerSecond)}`, `p50 ${server.p50.toFixed(2)} ms, p99 ${server.p99.toFixed(2)} ms; target p99 ≤ 2 ms`);
    bench.report('server/ / nginx, requests/s', `${median(ratios).toFixed(2)}×`, `rounds: ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}; target ≥ 0.5×`);
    const bareRatios = rounds.map((round) => round.bare.requestsPerSecond / round.nginx.requestsPerSecond);
    const bareSummary = summarize(rounds.map((round) => round.bare));
    bench.report('plain node:http from a Map / nginx (Node\'s ceiling here)', `${median(bareRatios).toFixed(2)}×`, `${Math.round(bareSummary.requestsPerSecond)} requests/s, p99 ${bareSummary.p99.toFixed(2)} ms`);
  } finally {
    bare.kill();
    server.kill();
    nginx.kill('SIGQUIT');
  }
}
