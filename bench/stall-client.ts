import { Agent, request } from 'node:http';

/**
 * The client side of `npm run bench -- stall`, in its own process so that its work never runs on the server's
 * event loop. Started with fork(); told by message what to do, it answers `ready`, and starts on `go` (so that
 * handing it the requests is not measured as the server's work):
 * - `{ role: 'probe', origin }`: asks `/api/health` one at a time (20 ms apart) until told `stop`, then answers with
 *   the latencies;
 * - `{ role: 'attack', origin, requests, ms }`: sends the requests in turn, again and again, for `ms` (twice at
 *   least), and answers with the statuses and the bytes read.
 */

/** One request of an attack. */
export interface StallRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What a message from the bench asks. */
export type StallOrder =
  | { role: 'probe'; origin: string }
  | { role: 'attack'; origin: string; requests: StallRequest[]; ms: number }
  | 'go'
  | 'stop';

/** What an attack reports. */
export interface AttackReport {
  sent: number;
  statuses: Record<string, number>;
  bytes: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });
let stopping = false;

function send(origin: string, { method, path, headers = {}, body }: StallRequest): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const outgoing = request(new URL(path, origin), { method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (incoming) => {
      let bytes = 0;
      incoming.on('data', (chunk: Buffer) => (bytes += chunk.byteLength));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, bytes, ms: performance.now() - started }));
      incoming.on('error', () => resolve({ status: 0, bytes, ms: performance.now() - started }));
    });
    outgoing.on('error', () => resolve({ status: 0, bytes: 0, ms: performance.now() - started }));
    outgoing.end(body);
  });
}

async function probe(origin: string): Promise<number[]> {
  const latencies: number[] = [];
  while (!stopping) {
    latencies.push((await send(origin, { method: 'GET', path: '/api/health' })).ms);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return latencies;
}

async function attack(origin: string, requests: StallRequest[], ms: number): Promise<AttackReport> {
  const report: AttackReport = { sent: 0, statuses: Object.create(null) as Record<string, number>, bytes: 0 };
  const until = performance.now() + ms;
  for (let round = 0; round < 2 || performance.now() < until; round++) {
    for (const item of requests) {
      const answer = await send(origin, item);
      report.sent++;
      report.bytes += answer.bytes;
      report.statuses[answer.status] = (report.statuses[answer.status] ?? 0) + 1;
    }
  }
  return report;
}

let task: Exclude<StallOrder, 'go' | 'stop'> | undefined;
process.on('message', (order: StallOrder) => {
  if (order === 'stop') {
    stopping = true;
    return;
  }
  if (order !== 'go') {
    task = order;
    process.send!('ready');
    return;
  }
  const done = task!.role === 'probe' ? probe(task!.origin) : attack(task!.origin, task!.requests, task!.ms);
  void done.then((result) => {
    agent.destroy();
    process.send!(result, () => process.exit(0));
  });
});
