import { Worker } from 'node:worker_threads';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';

/**
 * Tools of the stall tests (issue 22): a probe that keeps asking `/api/health` from its own thread, so that the
 * test's own work cannot delay it, and clients with their own loopback address, so that the server sees them as
 * different clients.
 */

/** Latencies of health checks, with when each was sent and answered (ms on the probe's clock, performance.timeOrigin). */
export interface HealthSample {
  sentAt: number;
  ms: number;
  status: number;
}

/** A running health probe. */
export interface HealthProbe {
  /** Resolves once the first check is answered: a thread takes a while to start on a busy machine. */
  ready: Promise<void>;
  /** Stops probing and resolves with every sample taken. */
  stop: () => Promise<HealthSample[]>;
}

/**
 * The probe's thread: one keep-alive connection, a health check every `pauseMs` after the last answered. A check
 * that finds the server stalled measures the whole stall, since the next is sent only after it is answered.
 */
const PROBE_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { request, Agent } = require('node:http');
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const { origin, pauseMs } = workerData;
const url = new URL('/api/health', origin);
const samples = [];
let stopping = false;
parentPort.on('message', () => { stopping = true; });
const check = () => new Promise((resolve) => {
  const sentAt = performance.timeOrigin + performance.now();
  const started = performance.now();
  const outgoing = request(url, { agent }, (incoming) => {
    incoming.resume();
    incoming.on('end', () => resolve({ sentAt, ms: performance.now() - started, status: incoming.statusCode }));
  });
  outgoing.on('error', () => resolve({ sentAt, ms: performance.now() - started, status: 0 }));
  outgoing.end();
});
(async () => {
  while (!stopping) {
    samples.push(await check());
    if (samples.length === 1) parentPort.postMessage('ready');
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  agent.destroy();
  parentPort.postMessage(samples);
})();
`;

/**
 * Starts asking `origin`'s `/api/health` from a worker thread, one check at a time.
 * @example const probe = startHealthProbe(server.origin); await probe.ready; await hostile(); const samples = await probe.stop();
 */
export function startHealthProbe(origin: string, pauseMs = 20): HealthProbe {
  const worker = new Worker(PROBE_SOURCE, { eval: true, workerData: { origin, pauseMs } });
  let markReady = () => undefined as void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const done = new Promise<HealthSample[]>((resolve, reject) => {
    worker.on('message', (message: HealthSample[] | 'ready') => (message === 'ready' ? markReady() : resolve(message)));
    worker.once('error', reject);
  });
  return {
    ready,
    stop: async () => {
      worker.postMessage('stop');
      const samples = await done;
      await worker.terminate();
      return samples;
    },
  };
}

/** Now, on the clock of {@link HealthSample.sentAt}. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** The slowest of `samples`, in ms (0 when there are none). */
export function slowest(samples: HealthSample[]): number {
  return samples.reduce((max, sample) => Math.max(max, sample.ms), 0);
}

/**
 * The second slowest of `samples`, in ms (0 when there are fewer than two). A request that stalls the server does
 * it each time it is sent, and each stall holds up the check then under way; so an attack sent twice or more slows
 * two checks, while a busy machine's lone hiccup (a check 500 ms late at load 10 on 2 cores) slows one.
 */
export function secondSlowest(samples: HealthSample[]): number {
  return samples.map((sample) => sample.ms).sort((a, b) => b - a)[1] ?? 0;
}

/**
 * The health checks that were waiting at some moment of [from, to]: sent before `to` and answered after `from`.
 */
export function samplesDuring(samples: HealthSample[], from: number, to: number): HealthSample[] {
  return samples.filter((sample) => sample.sentAt <= to && sample.sentAt + sample.ms >= from);
}

/**
 * The bound a health check must meet while a hostile request runs: the 200 ms, loosened by what the same
 * machine showed without it (four times the slowest check of the baseline), so a busy machine does not fail the
 * test while a stall of seconds still does.
 */
export function healthBound(baseline: HealthSample[]): number {
  return 200 + 4 * slowest(baseline);
}

/** An answer read whole: status, headers (lower-case names) and body bytes. */
export interface ClientAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A client whose requests leave from its own loopback address (127.0.0.x), so the server counts it apart. */
export interface LoopbackClient {
  send: (method: string, url: string, options?: { headers?: Record<string, string>; body?: string }) => Promise<ClientAnswer>;
  close: () => void;
}

/**
 * A client bound to `address` (any 127.0.0.0/8 address works on Linux without setup), with keep-alive connections.
 * @example const other = loopbackClient('127.0.0.2'); await other.send('GET', `${origin}/api/health`);
 */
export function loopbackClient(address: string, connections = 128): LoopbackClient {
  const agent = new HttpAgent({ keepAlive: true, maxSockets: connections });
  return {
    send: (method, url, options = {}) => new Promise((resolve, reject) => {
      const headers = options.body === undefined ? options.headers : { 'content-length': String(Buffer.byteLength(options.body)), ...options.headers };
      const outgoing = httpRequest(url, { method, headers, agent, localAddress: address }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const flat: Record<string, string> = {};
          for (const [name, value] of Object.entries(incoming.headers)) flat[name] = [value ?? ''].flat().join(', ');
          resolve({ status: incoming.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks) });
        });
      });
      outgoing.on('error', reject);
      outgoing.end(options.body);
    }),
    close: () => agent.destroy(),
  };
}

/** Polls `read` every 250 ms for up to `timeoutMs` until `done` holds; resolves with the last value read. */
export async function pollUntil<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    value = await read();
  }
  return value;
}
