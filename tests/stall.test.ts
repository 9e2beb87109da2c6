import { request as httpRequest, type IncomingMessage } from 'node:http';
import { readdirSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from './helpers/fuzz-server.ts';
import { sampleConfig } from './helpers/sample.ts';
import { healthBound, loopbackClient, pollUntil, samplesDuring, secondSlowest, slowest, startHealthProbe, wallNow, type ClientAnswer, type HealthSample } from './helpers/stall.ts';

/** How far the server's RSS may stay above where it was before a hostile request, once it is answered. */
const RSS_SLACK_BYTES = 64 * 1024 * 1024;
/** Send idle timeout of the server under test: a download nobody reads is cut after it. */
const SEND_IDLE_TIMEOUT_MS = 2000;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const JSON_HEADERS = { 'content-type': 'application/json' };

let server: ChildServer;
let cities: { alias: string; collection_id: number; dataset_id: number; file_id: number; file_source_id: number };
/** The client every hostile request comes from; the probe and the bystanders come from other addresses. */
const hostile = loopbackClient('127.0.0.2', 512);
const bystander = loopbackClient('127.0.0.3');

beforeAll(async () => {
  // A query deadline of a minute: at load 10 on 2 cores, the download test's 50,000 rows took past the default 10 s.
  server = await startChildServer(sampleConfig(), { env: { GEOSHELF_MCP_RATE: '20', GEOSHELF_SEND_IDLE_TIMEOUT_MS: String(SEND_IDLE_TIMEOUT_MS), GEOSHELF_QUERY_TIMEOUT_MS: '60000' } });
  cities = await sourceOf(server.origin, 'geonames', 'cities', 'cities-1000');
});
afterAll(async () => {
  hostile.close();
  bystander.close();
  await server?.close();
});

describe('no single request stalls the server (issue 22)', () => {
  it('answers health promptly while a STAC free-text search of 16,000 words runs, and answers the search', async () => {
    const q = Array.from({ length: 16_000 }, (_, index) => (index % 7 === 0 ? 'countries' : `w${index.toString(36)}`)).join(' ');
    await expectNoStall(() => postJson(hostile, '/stac/api/search', { q, limit: 10 }), (answer) => {
      expect([200, 400]).toContain(answer.status);
    });
  });

  it('answers health promptly while 1 MiB of nested arrays is posted to the STAC search, and refuses it', async () => {
    const depth = 512 * 1024;
    const body = '['.repeat(depth) + ']'.repeat(depth);
    await expectNoStall(() => hostile.send('POST', `${server.origin}/stac/api/search`, { headers: JSON_HEADERS, body }), (answer) => {
      expect(answer.status).toBe(400);
    });
  });

  it('answers health promptly while 64 KiB of nested arrays is posted as a query, and refuses it', async () => {
    const depth = 32 * 1024 - 8;
    const body = `{"sql":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    await expectNoStall(() => hostile.send('POST', `${server.origin}/api/queries`, { headers: JSON_HEADERS, body }), (answer) => {
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body.toString())).toMatchObject({ code: 'body_too_deep', message: expect.stringContaining('at most 32 levels') });
    });
  });

  it('answers health promptly while 256 KiB of nested arrays is posted to MCP, and refuses it', async () => {
    const depth = 128 * 1024 - 64;
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags","arguments":{"collection":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
    let refused = 0;
    // Past the client's MCP rate the answer is 429 before the body is read; the first ones meet the depth check.
    await expectNoStall(() => hostile.send('POST', `${server.origin}/mcp`, { headers: MCP_HEADERS, body }), (answer) => {
      expect([400, 429]).toContain(answer.status);
      if (answer.status === 429) return;
      expect(JSON.parse(answer.body.toString()).error.message).toContain('at most 32 levels');
      refused++;
    });
    expect(refused).toBeGreaterThan(0);
  });

  it.each([
    ['a polygon of 20,000 positions, the most it takes', circle([10, 10], 40, 19_999), 200],
    ['a MultiPolygon of 1,000 parts, the most it takes', squares(1_000), 200],
    ['a polygon of 20,001 positions', circle([10, 10], 40, 20_000), 400],
    ['a MultiPolygon of 4,000 parts', squares(4_000), 400],
  ])('answers health promptly while a STAC search intersects %s, and answers it', async (_name, intersects, status) => {
    await expectNoStall(() => postJson(hostile, '/stac/api/search', { intersects, limit: 10 }), (answer) => {
      expect(answer.status).toBe(status);
    });
  });

  it('refuses an MCP batch of 100 tools/list calls with a short answer, and answers health promptly meanwhile', async () => {
    const batch = Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/list' }));
    await expectNoStall(() => postJson(hostile, '/mcp', batch, MCP_HEADERS), (answer) => {
      expect(answer.status).toBeLessThan(500);
      // One tools/list answer is about 56 KB: a batch answered in full would be 100 times that.
      expect(answer.body.byteLength).toBeLessThan(64 * 1024);
    });
  });

  it('answers health promptly while a client calls tools/list 18 times a second', async () => {
    await expectNoStall(async () => {
      const answers = await Promise.all(Array.from({ length: 18 }, async (_, index) => {
        await sleep(index * (1000 / 18));
        return postJson(hostile, '/mcp', { jsonrpc: '2.0', id: index, method: 'tools/list' }, MCP_HEADERS);
      }));
      return answers.at(-1)!;
    }, (answer) => {
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body.toString()).result.tools.length).toBeGreaterThan(0);
    });
  });

  it('keeps serving another client\'s query while one client floods the query pool and MCP with run_query', async () => {
    const heavy = { sources: [cities], sql: 'SELECT name, country, population FROM c ORDER BY population DESC, name', limit: 1000 };
    const light = { sources: [cities], sql: 'SELECT count(*) AS n FROM c', limit: 1 };
    const batch = Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run_query', arguments: heavy } }));
    const flood = Promise.all([
      ...Array.from({ length: 4 }, () => postJson(hostile, '/mcp', batch, MCP_HEADERS)),
      ...Array.from({ length: 300 }, () => postJson(hostile, '/api/queries', heavy)),
    ]);
    await sleep(200);
    const others: ClientAnswer[] = [];
    for (let round = 0; round < 5; round++) others.push(await postJson(bystander, '/api/queries', light));
    const flooded = await flood;
    expect(others.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    // The flooding client gets its own answers, its overload (503) and deadlines (504) included, never a failure.
    expect(flooded.map((answer) => answer.status).filter((status) => ![200, 400, 429, 503, 504].includes(status))).toEqual([]);
  });

  it('cuts a download whose client stops reading, and lets go of its temporary file', async () => {
    const created = await postJson(hostile, '/api/queries', { sources: [cities], sql: 'SELECT * FROM c ORDER BY city_id LIMIT 50000', limit: 1 });
    expect(created.status).toBe(200);
    const { query_id: id, query_token: token } = JSON.parse(created.body.toString()) as { query_id: string; query_token: string };
    const url = `${server.origin}/api/queries/${id}/download.geojson?token=${encodeURIComponent(token)}`;
    const whole = await bystander.send('GET', url);
    expect(whole.status).toBe(200);

    const stalled = await openAndStopReading(url);
    expect(stalled.response.statusCode).toBe(200);
    const pinned = await pollUntil(() => deletedFilesOpenBy(server.pid), (files) => files.length === 0, SEND_IDLE_TIMEOUT_MS + 10_000);
    expect(pinned).toEqual([]);
    const received = await stalled.readRest();
    expect(received.complete).toBe(false);
    expect(received.bytes).toBeLessThan(whole.body.byteLength);
    expect((await bystander.send('GET', `${server.origin}/api/health`)).status).toBe(200);
  });
});

describe('the first query after start (issue 22)', () => {
  let fresh: ChildServer;
  afterAll(() => fresh?.close());

  it('is answered about as fast as the next one, since the workers start with the server', async () => {
    fresh = await startChildServer(sampleConfig());
    const items = `${fresh.origin}/features/collections/geonames.cities.cities-1000/items?limit=10`;
    const first = await timed(() => bystander.send('GET', items));
    const second = await timed(() => bystander.send('GET', `${items}&after=9`));
    expect(first.answer.status).toBe(200);
    expect(second.answer.status).toBe(200);
    expect(first.ms).toBeLessThanOrEqual(4 * second.ms + 300);
  });
});

/**
 * Runs `attack` again and again for a second (at least twice), while a probe asks for health from another thread,
 * and checks each answer with `check`. The second slowest health check must be answered within {@link healthBound}
 * of a baseline taken just before (see {@link secondSlowest}), the slowest within twice that, every check while the
 * attack ran answered 200, and the server's RSS must come back within 64 MB of where it was after a first second
 * of attacks.
 */
async function expectNoStall(attack: () => Promise<ClientAnswer>, check: (answer: ClientAnswer) => void): Promise<void> {
  // A second of attacks first, out of the measure: the server's heap grows to what such a flood needs and keeps it
  // (the first second of 16,000-word STAC searches left 61 MB that stayed, the next second 4 MB), which is no leak.
  for (const answer of await flood(attack)) check(answer);
  const baseline = await probeFor(750);
  const rssBefore = server.rssBytes();
  const probe = startHealthProbe(server.origin);
  await probe.ready;
  const from = wallNow();
  const answers = await flood(attack);
  const to = wallNow();
  const during = samplesDuring(await probe.stop(), from, to);
  for (const answer of answers) check(answer);
  expect(during.length).toBeGreaterThan(0);
  expect(during.every((sample) => sample.status === 200)).toBe(true);
  const bound = healthBound(baseline);
  const against = `against a baseline whose slowest was ${slowest(baseline).toFixed(1)} ms`;
  expect(secondSlowest(during), `second slowest health check while attacked, ${against}`).toBeLessThanOrEqual(bound);
  expect(slowest(during), `slowest health check while attacked, ${against}`).toBeLessThanOrEqual(2 * bound);
  const rss = await pollUntil(() => server.rssBytes(), (value) => value - rssBefore <= RSS_SLACK_BYTES, 15_000);
  expect(rss - rssBefore).toBeLessThanOrEqual(RSS_SLACK_BYTES);
  expect(server.alive()).toBe(true);
}

/** Runs `attack` again and again for a second, at least twice; its answers. */
async function flood(attack: () => Promise<ClientAnswer>): Promise<ClientAnswer[]> {
  const from = wallNow();
  const answers: ClientAnswer[] = [];
  for (let round = 0; round < 2 || wallNow() - from < 1000; round++) answers.push(await attack());
  return answers;
}

async function probeFor(ms: number): Promise<HealthSample[]> {
  const probe = startHealthProbe(server.origin);
  await probe.ready;
  await sleep(ms);
  return probe.stop();
}

function postJson(client: typeof hostile, path: string, body: unknown, headers: Record<string, string> = JSON_HEADERS): Promise<ClientAnswer> {
  return client.send('POST', `${server.origin}${path}`, { headers, body: JSON.stringify(body) });
}

async function sourceOf(origin: string, collection: string, dataset: string, file: string) {
  const detail = JSON.parse((await bystander.send('GET', `${origin}/api/collections/${collection}/datasets/${dataset}`)).body.toString()) as {
    collection: { id: number };
    dataset: { id: number; files: { id: number; slug: string; formats: { format: { format_type: string }; sources: { id: number }[] }[] }[] };
  };
  const target = detail.dataset.files.find((candidate) => candidate.slug === file)!;
  const source = target.formats.find((format) => format.format.format_type === 'geoparquet')!.sources[0]!;
  return { alias: 'c', collection_id: detail.collection.id, dataset_id: detail.dataset.id, file_id: target.id, file_source_id: source.id };
}

/** Starts a GET, takes its headers, then reads nothing more until `readRest`, which reads on to the end or the cut. */
function openAndStopReading(url: string): Promise<{ response: IncomingMessage; readRest: () => Promise<{ bytes: number; complete: boolean }> }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { localAddress: '127.0.0.4' }, (response) => {
      response.pause();
      resolve({
        response,
        readRest: () => new Promise((done) => {
          let bytes = 0;
          response.on('data', (chunk: Buffer) => (bytes += chunk.byteLength));
          response.once('close', () => done({ bytes, complete: response.complete }));
          response.resume();
        }),
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Files a process holds open that were deleted (a temporary file pinned by an unfinished response). */
function deletedFilesOpenBy(pid: number): string[] {
  const found: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.endsWith('(deleted)')) found.push(target);
    } catch {
      // The descriptor closed between listing and reading.
    }
  }
  return found;
}

async function timed(send: () => Promise<ClientAnswer>): Promise<{ answer: ClientAnswer; ms: number }> {
  const started = performance.now();
  const answer = await send();
  return { answer, ms: performance.now() - started };
}

/** A closed ring of `vertices` points round `center`, `radius` degrees wide. */
function circle(center: [number, number], radius: number, vertices: number) {
  const ring = Array.from({ length: vertices }, (_, index) => {
    const angle = (2 * Math.PI * index) / vertices;
    return [center[0] + radius * Math.cos(angle), center[1] + radius * Math.sin(angle) * 0.5];
  });
  return { type: 'Polygon', coordinates: [[...ring, ring[0]!]] };
}

/** A MultiPolygon of `parts` small squares on a grid over the world. */
function squares(parts: number) {
  const columns = Math.ceil(Math.sqrt(parts * 2));
  return {
    type: 'MultiPolygon',
    coordinates: Array.from({ length: parts }, (_, index) => {
      const x = -179 + ((index % columns) * 358) / columns;
      const y = -80 + (Math.floor(index / columns) * 160) / (parts / columns);
      return [[[x, y], [x + 0.1, y], [x + 0.1, y + 0.1], [x, y + 0.1], [x, y]]];
    }),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
