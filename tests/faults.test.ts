import { randomBytes } from 'node:crypto';
import { cp, readdir, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import type { GeoshelfServer } from '../server/app.ts';
import { createServer } from '../server/app.ts';
import { ROOT, makeTempDir, makeTestConfig } from './helpers/catalog.ts';
import { getWithToken, post, sourceRef, TEST_KEYS } from './helpers/queries.ts';
import { get, sampleConfig } from './helpers/sample.ts';

const MEGACITIES = 'geonames/megacities/3.1.0/megacities.parquet';
const LAYER = 'geonames.megacities.megacities';

/** Sends a JSON-RPC tools/call to /mcp and returns the tool result. */
async function callTool(server: GeoshelfServer, name: string, args: Record<string, unknown>): Promise<{ isError?: boolean; content: { text: string }[] }> {
  const response = await server.fetch(new Request('http://localhost/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  }));
  return ((await response.json()) as { result: { isError?: boolean; content: { text: string }[] } }).result;
}

describe('a data file that breaks while the server runs', () => {
  let server: GeoshelfServer;
  let dataDir: string;
  let path: string;
  let original: Buffer;
  /** atime and mtime in seconds, as precise as stat gives them (a Date would round the mtime to the millisecond). */
  let times: [number, number];
  const sql = 'SELECT name, population, geometry FROM t ORDER BY population DESC, name';
  const ref = () => sourceRef(server, 't', 'geonames', 'megacities', 'megacities');
  const other = () => sourceRef(server, 'c', 'natural-earth', 'countries', 'countries-110m');
  const create = (body: Record<string, unknown>) => post(server, '/api/queries', body);
  const zipPath = () => {
    const source = ref();
    return `/api/collections/geonames/datasets/megacities/files/megacities/sources/${source.file_source_id}/download-zip`;
  };
  let before: { rows: unknown; page: unknown; bounds: unknown; features: unknown; etag: string | null; zipEtag: string | null };
  let query: { query_id: string; query_token: string };

  beforeAll(async () => {
    dataDir = join(await makeTempDir('geoshelf-faults-'), 'data');
    await cp(join(ROOT, 'catalog-data', 'data'), dataDir, { recursive: true });
    path = join(dataDir, MEGACITIES);
    original = await readFile(path);
    const info = await stat(path);
    times = [info.atimeMs / 1000, info.mtimeMs / 1000];
    server = createServer({ config: { ...sampleConfig(), dataDir, queryKeys: TEST_KEYS, queryTimeoutMs: 8000 }, serveData: true });
    const first = await (await create({ sources: [ref()], sql, limit: 5 })).json();
    query = first;
    const page = await (await post(server, `/api/queries/${first.query_id}/pages`, { offset: 5, page_size: 5 }, { 'x-service-query-token': first.query_token })).json();
    const bounds = await (await getWithToken(server, `/api/queries/${first.query_id}/bounds`, first.query_token)).json();
    const features = await (await get(server, `/features/collections/${LAYER}/items?limit=5`)).json();
    const etag = (await get(server, `/data/${MEGACITIES}`)).headers.get('etag');
    const zipEtag = (await get(server, zipPath())).headers.get('etag');
    before = { rows: first.rows, page: page.rows, bounds, features: features.features, etag, zipEtag };
  });
  afterAll(async () => {
    await server?.close();
    await rm(join(dataDir, '..'), { recursive: true, force: true });
  });

  const expectUnavailable = async (response: Response, where: string) => {
    const body = await response.json();
    expect({ where, status: response.status, code: body.code }).toEqual({ where, status: 503, code: 'source_unavailable' });
    expect(Number(response.headers.get('retry-after')), where).toBeGreaterThan(0);
    expect(JSON.stringify(body), where).not.toContain(dataDir);
  };

  // Each case asks for its own tile: a tile answered before the fault is served from the cache, rightly (same build, same bytes).
  describe.each([
    ['deleted', '2/1/1', () => rm(path)],
    ['truncated', '2/2/1', () => truncate(path, 5000)],
    // Same size and the same mtime: a worker's kept features sandbox of this file must not be trusted.
    ['replaced with garbage of the same size and mtime', '2/3/1', async () => {
      await writeFile(path, randomBytes(original.length));
      await utimes(path, ...times);
    }],
  ])('%s', (fault, tile, breakFile) => {
    beforeAll(async () => {
      await breakFile();
    });

    it('answers 503 source_unavailable with Retry-After on the queries that read it: create, page, bounds, tile, features, MCP', async () => {
      await expectUnavailable(await create({ sources: [ref()], sql, limit: 5 }), 'create');
      await expectUnavailable(await post(server, `/api/queries/${query.query_id}/pages`, { offset: 5, page_size: 5 }, { 'x-service-query-token': query.query_token }), 'page');
      await expectUnavailable(await getWithToken(server, `/api/queries/${query.query_id}/bounds`, query.query_token), 'bounds');
      await expectUnavailable(await getWithToken(server, `/api/queries/${query.query_id}/tiles/${tile}.mvt`, query.query_token), 'tile');
      const features = await get(server, `/features/collections/${LAYER}/items?limit=5`);
      expect(features.status).toBe(503);
      expect((await features.json()).code).toBe('source_unavailable');
      expect(Number(features.headers.get('retry-after'))).toBeGreaterThan(0);
      const tool = await callTool(server, 'run_query', { sources: [ref()], sql, limit: 5 });
      expect(tool.isError).toBe(true);
      expect(JSON.parse(tool.content[0]!.text).code).toBe('source_unavailable');
    });

    it('keeps every other route working: the catalog, other sources\' queries, static files, other data files', async () => {
      expect((await get(server, '/api/collections')).status).toBe(200);
      expect((await get(server, '/api/collections/geonames/datasets/megacities')).status).toBe(200);
      const countries = await create({ sources: [other()], sql: 'SELECT count(*) AS n FROM c' });
      expect(countries.status).toBe(200);
      expect((await get(server, '/')).status).toBe(200);
      expect((await get(server, '/data/geonames/national-capitals/3.1.0/national-capitals.parquet')).status).toBe(200);
      expect((await get(server, '/features/collections/natural-earth.countries.countries-110m/items?limit=2')).status).toBe(200);
    });

    it('serves the data file and its download-zip as a clean answer, never a body that breaks half way', async () => {
      const data = await get(server, `/data/${MEGACITIES}`);
      const zip = await get(server, zipPath());
      if (fault === 'deleted') {
        expect(data.status).toBe(404);
        expect(zip.status).toBe(503);
        expect(zip.headers.get('content-type')).toBe('application/problem+json');
        expect(Number(zip.headers.get('retry-after'))).toBeGreaterThan(0);
        return;
      }
      const bytes = Buffer.from(await data.arrayBuffer());
      expect(bytes).toEqual(await readFile(path));
      expect(data.headers.get('etag')).not.toBe(before.etag);
      expect(zip.status).toBe(200);
      const archive = Buffer.from(await zip.arrayBuffer());
      expect(archive.length).toBe(Number(zip.headers.get('content-length')));
      expect(zip.headers.get('etag')).not.toBe(before.zipEtag);
      const range = await get(server, zipPath(), { range: 'bytes=0-99', 'if-range': before.zipEtag! });
      expect(range.status, 'a range asked for the old archive gets the whole new one').toBe(200);
    });

    it('answers as before once the file is restored: same rows, pages, bounds, features and ETags', async () => {
      await writeFile(path, original);
      await utimes(path, ...times);
      const again = await (await create({ sources: [ref()], sql, limit: 5 })).json();
      expect(again.rows).toEqual(before.rows);
      const page = await post(server, `/api/queries/${query.query_id}/pages`, { offset: 5, page_size: 5 }, { 'x-service-query-token': query.query_token });
      expect((await page.json()).rows).toEqual(before.page);
      expect(await (await getWithToken(server, `/api/queries/${query.query_id}/bounds`, query.query_token)).json()).toEqual(before.bounds);
      expect([200, 204]).toContain((await getWithToken(server, `/api/queries/${query.query_id}/tiles/${tile}.mvt`, query.query_token)).status);
      for (let read = 0; read < 4; read++) {
        const features = await get(server, `/features/collections/${LAYER}/items?limit=5`);
        expect(features.status).toBe(200);
        expect((await features.json()).features).toEqual(before.features);
      }
      const data = await get(server, `/data/${MEGACITIES}`);
      expect(Buffer.from(await data.arrayBuffer())).toEqual(original);
      // Restoring is a write: the ETag moves on (ctime), so no cache keeps bytes of the broken file under it.
      expect(data.headers.get('etag')).not.toBe(before.etag);
      const zip = await get(server, zipPath());
      expect(zip.status).toBe(200);
      expect(Number(zip.headers.get('content-length'))).toBe((await zip.arrayBuffer()).byteLength);
    });
  });

  it('ends a download-zip whose file is cut short while it streams with a broken body, not a whole one, and keeps answering', async () => {
    const source = sourceRef(server, 'c', 'geonames', 'cities', 'cities-1000');
    const response = await get(server, `/api/collections/geonames/datasets/cities/files/cities-1000/sources/${source.file_source_id}/download-zip`);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let received = (await reader.read()).value?.length ?? 0;
    await truncate(join(dataDir, 'geonames/cities/3.1.0/cities-1000.parquet'), 1000);
    const read = async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) received += chunk.value.length;
    };
    await expect(read()).rejects.toThrow();
    expect(received).toBeLessThan(Number(response.headers.get('content-length')));
    expect((await get(server, '/api/collections')).status).toBe(200);
  });
});

/** Pids of the query workers this test process forked, with the CPU time each has used (ticks, from /proc). */
async function listWorkers(): Promise<Map<number, number>> {
  const workers = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== process.pid) continue;
      if (!(await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes('query/worker.ts')) continue;
      workers.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process ended while it was being read.
    }
  }
  return workers;
}

/** The worker that is running a query: the one whose CPU time grows by a fifth of a second while we watch. */
async function findBusyWorker(): Promise<number> {
  const start = await listWorkers();
  for (let attempt = 0; attempt < 100; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const [pid, ticks] of await listWorkers()) if (ticks - (start.get(pid) ?? ticks) >= 20) return pid;
  }
  throw new Error('no query worker became busy');
}

describe('a worker stopped in the middle of a query', () => {
  let server: GeoshelfServer;
  const cities = () => sourceRef(server, 'c', 'geonames', 'cities', 'cities-1000');
  // A cross join of 10^10 pairs that no filter can shorten: it runs until the worker is stopped.
  const endless = () => ({ sources: [cities()], sql: 'SELECT count(*) AS n FROM c a, c b WHERE (a.population + b.population) % 7 = 3' });
  const light = () => ({ sources: [cities()], sql: 'SELECT count(*) AS n FROM c' });

  beforeAll(async () => {
    server = createServer({ config: { ...sampleConfig(), queryKeys: TEST_KEYS, queryTimeoutMs: 30_000, queryWorkers: 1, querySpareWorkers: 0 } });
    await server.queries.pool.ready();
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['SIGKILL (the OOM killer, kill -9)', 503, 'query_worker_lost', 'SIGKILL'],
    ['SIGTERM (an operator)', 503, 'query_worker_lost', 'SIGTERM'],
    ['SIGINT', 503, 'query_worker_lost', 'SIGINT'],
    ['SIGSEGV (a crash)', 422, 'query_failed', 'SIGSEGV'],
    ['SIGABRT (a crash)', 422, 'query_failed', 'SIGABRT'],
  ] as const)('by %s answers %i %s, and the next query succeeds', async (_, status, code, signal) => {
    const restarts = server.queries.pool.restarts;
    const running = post(server, '/api/queries', endless());
    process.kill(await findBusyWorker(), signal);
    const response = await running;
    const body = await response.json();
    expect({ status: response.status, code: body.code }).toEqual({ status, code });
    if (status === 503) {
      expect(response.headers.get('retry-after')).toBe('1');
      expect(body.message).toMatch(/not at fault/);
    }
    const next = await post(server, '/api/queries', light());
    expect(next.status).toBe(200);
    expect((await next.json()).rows[0].n).toBeGreaterThan(100_000);
    expect(server.queries.pool.restarts).toBe(restarts + 1);
  });
});

describe('the catalog rebuilt while page tokens are in flight', () => {
  let server: GeoshelfServer;
  let config: Awaited<ReturnType<typeof makeTestConfig>>;
  const sql = 'SELECT name, population, geometry FROM t ORDER BY population DESC, name';
  const ref = () => sourceRef(server, 't', 'geonames', 'megacities', 'megacities');
  // Whole, so that the server loads a new tree even where the inputs are those of the last build (which skips).
  const rebuild = async () => {
    await buildCatalog({ config, full: true });
    expect(await server.reload()).toBe(true);
  };
  /** A query's first page and token, and what its second page, bounds and a tile answer now. */
  const start = async () => (await (await post(server, '/api/queries', { sources: [ref()], sql, limit: 5 })).json()) as { query_id: string; query_token: string; rows: unknown[] };
  const follow = async (query: { query_id: string; query_token: string }) => {
    const page = await post(server, `/api/queries/${query.query_id}/pages`, { offset: 5, page_size: 5 }, { 'x-service-query-token': query.query_token });
    const bounds = await getWithToken(server, `/api/queries/${query.query_id}/bounds`, query.query_token);
    const tile = await getWithToken(server, `/api/queries/${query.query_id}/tiles/0/0/0.mvt`, query.query_token);
    const pageBody = await page.json();
    return {
      // Rows, or the error: a page's other facts (elapsed_ms, bytes_read) vary from run to run.
      page: { status: page.status, body: page.ok ? pageBody.rows : pageBody },
      bounds: { status: bounds.status, body: await bounds.json() },
      tile: { status: tile.status, body: tile.headers.get('content-type')?.includes('json') ? await tile.json() : Buffer.from(await tile.arrayBuffer()) },
    };
  };

  beforeAll(async () => {
    const made = await makeTestConfig();
    const dataDir = join(made.root, 'data');
    await cp(join(ROOT, 'catalog-data', 'data'), dataDir, { recursive: true });
    config = { ...made, dataDir, queryKeys: TEST_KEYS };
    await buildCatalog({ config });
    server = createServer({ config });
  });
  afterAll(async () => {
    await server?.close();
    await rm(config.root, { recursive: true, force: true });
  });

  it('keeps old tokens paging, framing and tiling with the same answers after a rebuild of the same data', async () => {
    const query = await start();
    const before = await follow(query);
    expect(before.page.status).toBe(200);
    await rebuild();
    expect(await follow(query)).toEqual(before);
  });

  it('refuses an old token with 422 query_outdated once the build reads new data at the same path, and a new query reads it', async () => {
    const query = await start();
    const path = join(config.dataDir, MEGACITIES);
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(`COPY (SELECT * REPLACE (upper(name) AS name) FROM read_parquet('${path}') ORDER BY population LIMIT 100) TO '${path}.new' (FORMAT parquet)`);
    connection.closeSync();
    instance.closeSync();
    await writeFile(path, await readFile(`${path}.new`));
    await rm(`${path}.new`);
    await rebuild();
    const after = await follow(query);
    for (const [route, answer] of Object.entries(after)) {
      expect({ route, status: answer.status, code: (answer.body as { code?: string }).code }).toEqual({ route, status: 422, code: 'query_outdated' });
    }
    expect((after.page.body as { message: string }).message).toMatch(/run the query again/);
    const fresh = await start();
    expect(fresh.rows).toHaveLength(5);
    expect(fresh.rows.every((row) => (row as { name: string }).name === (row as { name: string }).name.toUpperCase())).toBe(true);
    expect((await follow(fresh)).page.status).toBe(200);
  });

  it('refuses an old token with 400 source_not_found, saying the source left the catalog, once its dataset is removed', async () => {
    const query = await start();
    await rm(join(config.catalogDir, 'datasets/geonames/megacities.yaml'));
    await rebuild();
    const after = await follow(query);
    for (const [route, answer] of Object.entries(after)) {
      expect({ route, status: answer.status, code: (answer.body as { code?: string }).code }).toEqual({ route, status: 400, code: 'source_not_found' });
    }
    expect((after.page.body as { message: string }).message).toMatch(/^sources\[0\] of this query is no longer in the catalog: collection \d+ has no dataset \d+\.$/);
  });
});
