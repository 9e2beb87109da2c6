import { spawn } from 'node:child_process';

/** bench/wrk/replay.lua: replays a file of requests and prints its figures as one JSON line. */
export const REPLAY_SCRIPT = new URL('./wrk/replay.lua', import.meta.url).pathname;
/** replay.lua with the query token header on every request (the second script argument). */
export const WITH_TOKEN_SCRIPT = new URL('./wrk/with-token.lua', import.meta.url).pathname;

/** One wrk run as bench/wrk/replay.lua reports it (microseconds). */
export interface WrkFigures {
  duration_us: number;
  requests: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
  errors: { connect: number; read: number; write: number; timeout: number };
  statuses: Record<string, number>;
}

/** A wrk run: the URL, the Lua script with its arguments, and the load. */
export interface WrkOptions {
  url: string;
  script: string;
  args: string[];
  threads: number;
  connections: number;
  seconds: number;
}

/**
 * Starts wrk; `result` resolves with the script's figures once it ends, `stop()` ends it early (SIGINT: wrk
 * then reports as usual).
 * @example const { result } = startWrk({ url, script: REPLAY_SCRIPT, args: [file], threads: 2, connections: 16, seconds: 10 });
 */
export function startWrk(options: WrkOptions): { result: Promise<WrkFigures>; stop: () => void } {
  const args = [`-t${options.threads}`, `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '30s', '-s', options.script, options.url, '--', ...options.args];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const result = new Promise<WrkFigures>((resolve, reject) => child.once('exit', () => {
    const line = output.split('\n').find((candidate) => candidate.startsWith('WRK-JSON '));
    if (line) resolve(JSON.parse(line.slice('WRK-JSON '.length)) as WrkFigures);
    else reject(new Error(`wrk printed no figures: ${output.slice(-1000)}`));
  }));
  return { result, stop: () => child.kill('SIGINT') };
}

/** Answers that were not 2xx, plus socket errors and timeouts: what a client saw fail. */
export function countFailures(figures: WrkFigures): number {
  const non2xx = Object.entries(figures.statuses).filter(([status]) => !status.startsWith('2')).reduce((sum, [, count]) => sum + count, 0);
  const { connect, read, write, timeout } = figures.errors;
  return non2xx + connect + read + write + timeout;
}

/** Requests per second of a run. */
export function requestsPerSecond(figures: WrkFigures): number {
  return figures.requests / (figures.duration_us / 1e6);
}
