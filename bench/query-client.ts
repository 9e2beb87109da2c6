import { Agent, request } from 'node:http';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { QUERY_ROUTES, QUERY_TOKEN_HEADER } from '../core/api/catalog/routes.ts';
import { encodeTile, tileBounds } from '../core/geo/mvt.ts';
import { createRandom } from './synthetic-catalog.ts';

/**
 * The measuring side of `npm run bench -- queries`, in its own process: it asks the query service over HTTP
 * (the server runs as a third process) and does the same work with plain DuckDB in this process, so both sides
 * are timed by one process and one clock, and neither side's work runs on the other's event loop. Started with
 * fork() and given a `QueryClientOrder`; it answers one `QueryClientReport` (or `{ error }`) and exits.
 */

/** A source of a query, as `POST /api/queries` takes it. */
export interface SourceRef {
  alias: string;
  collection_id: number;
  dataset_id: number;
  file_id: number;
  file_source_id: number;
}

/** What the bench asks the client to measure. */
export interface QueryClientOrder {
  origin: string;
  /** The 1M-point GeoParquet file in spatial order, and the same points in random order. */
  paths: { points: string; random: string };
  sources: { points: SourceRef; random: SourceRef };
  /** DuckDB threads of the plain side: the service's GEOSHELF_QUERY_THREADS. */
  threads: number;
  tileMaxFeatures: number;
  seed: number;
  rounds: number;
  /** Timed runs of each side, per case, mode and round. */
  runs: number;
  /** Idle time before each timed run in the `pause` mode. */
  pauseMs: number;
}

/** The service over HTTP, or plain DuckDB in the client process. */
export type Side = 'service' | 'plain';
/** `pause`: each timed run starts `pauseMs` after the last ended; `back to back`: at once. */
export type Mode = 'pause' | 'back to back';
/** One timed run; `steps` holds the Server-Timing durations of a service answer that had them. */
export interface TimedRun { side: Side; ms: number; steps?: Record<string, number> }
/** The timed runs of one case in one mode and round, in the order they ran. */
export interface CaseRound { name: string; mode: Mode; round: number; runs: TimedRun[] }
/** What the client answers: the cases in their declared order, what each side answered first, and every round. */
export interface QueryClientReport { names: string[]; answers: Record<string, Record<Side, string>>; rounds: CaseRound[] }

const SIDES: readonly Side[] = ['service', 'plain'];
const MODES: readonly Mode[] = ['pause', 'back to back'];

/** One run of a side: its time, and a short account of its answer, to check that both sides did the same work. */
interface Outcome { ms: number; steps?: Record<string, number>; describe: () => string }
interface BenchCase { name: string; service: () => Promise<Outcome>; plain: () => Promise<Outcome> }

const PAGE_LIMIT = 100;
const DEEP_OFFSET = 500_000;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/**
 * The durations of a Server-Timing header (`name;dur=ms, name;desc="…";dur=ms`), by name, whatever the names;
 * a name given twice counts its sum, an entry without `dur` is left out.
 */
function parseServerTiming(header: string | undefined): Record<string, number> | undefined {
  if (!header) return undefined;
  const steps: Record<string, number> = {};
  for (const entry of header.match(/(?:[^,"]|"[^"]*")+/g) ?? []) {
    const [name, ...params] = entry.split(';').map((part) => part.trim());
    const ms = Number(params.find((param) => param.toLowerCase().startsWith('dur='))?.slice(4).replaceAll('"', ''));
    if (name && Number.isFinite(ms)) steps[name] = (steps[name] ?? 0) + ms;
  }
  return Object.keys(steps).length > 0 ? steps : undefined;
}

/** One request to the server, read whole (not parsed), timed from the call to the last byte. */
function send(origin: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const sent = payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
  const started = performance.now();
  return new Promise<{ ms: number; status: number; body: Buffer; steps?: Record<string, number> }>((resolve, reject) => {
    const outgoing = request(new URL(path, origin), { method, agent, headers: sent }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        const ms = performance.now() - started;
        const status = incoming.statusCode ?? 0;
        const text = Buffer.concat(chunks);
        // A bench that timed error answers would flatter the service: any other status ends the run.
        if (status !== 200 && status !== 204) return reject(new Error(`${method} ${path} answered ${status}: ${text.toString('utf8').slice(0, 300)}`));
        const timing = incoming.headers['server-timing'];
        resolve({ ms, status, body: text, steps: parseServerTiming(Array.isArray(timing) ? timing.join(', ') : timing) });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** The service side: a first page, a later page, the bounds or a tile of a query, over HTTP with keep-alive. */
function serviceSide(origin: string) {
  const answer = (reply: Awaited<ReturnType<typeof send>>, describe: () => string): Outcome => ({ ms: reply.ms, ...(reply.steps ? { steps: reply.steps } : {}), describe });
  const rowsOf = (body: Buffer) => () => `${(JSON.parse(body.toString('utf8')) as { returned_count: number }).returned_count} rows`;
  const create = async (source: SourceRef, sql: string, limit: number) => send(origin, 'POST', QUERY_ROUTES.createQuery.path, {}, { sources: [source], sql, limit });
  return {
    /** Makes a query (a first page of one row) and answers its id and token, for later pages, bounds and tiles. */
    makeQuery: async (source: SourceRef, sql: string) => {
      const made = JSON.parse((await create(source, sql, 1)).body.toString('utf8')) as { query_id: string; query_token: string };
      return { id: made.query_id, token: made.query_token };
    },
    firstPage: (source: SourceRef, sql: string) => async () => {
      const reply = await create(source, sql, PAGE_LIMIT);
      return answer(reply, rowsOf(reply.body));
    },
    page: (query: { id: string; token: string }, offset: number) => async () => {
      const reply = await send(origin, 'POST', QUERY_ROUTES.getQueryPage.fillPath({ query_id: query.id }), { [QUERY_TOKEN_HEADER]: query.token }, { offset, page_size: PAGE_LIMIT });
      return answer(reply, rowsOf(reply.body));
    },
    bounds: (query: { id: string; token: string }) => async () => {
      const reply = await send(origin, 'GET', QUERY_ROUTES.getQueryBounds.fillPath({ query_id: query.id }), { [QUERY_TOKEN_HEADER]: query.token });
      return answer(reply, () => describeBounds((JSON.parse(reply.body.toString('utf8')) as { bounds: number[] }).bounds));
    },
    tile: (query: { id: string; token: string }, z: number, x: number, y: number) => async () => {
      const reply = await send(origin, 'GET', QUERY_ROUTES.getQueryTile.fillPath({ query_id: query.id, z, x, y }), { [QUERY_TOKEN_HEADER]: query.token });
      return answer(reply, () => (reply.status === 204 ? 'no features' : `a tile of ${reply.body.byteLength} bytes`));
    },
  };
}

/** The plain side: the same work in a warm DuckDB instance of this process, rows read whole (`getRows`, no JSON). */
function plainSide(connection: DuckDBConnection, tileMaxFeatures: number) {
  const timed = async <T>(work: () => Promise<T>, describe: (value: T) => string): Promise<Outcome> => {
    const started = performance.now();
    const value = await work();
    const ms = performance.now() - started;
    return { ms, describe: () => describe(value) };
  };
  const rowsOf = async (sql: string) => (await connection.runAndReadAll(sql)).getRows();
  return {
    page: (sql: string, offset = 0) => () => timed(
      () => rowsOf(`SELECT * FROM (${sql}) LIMIT ${PAGE_LIMIT + 1} OFFSET ${offset}`),
      (rows) => `${Math.min(rows.length, PAGE_LIMIT)} rows`,
    ),
    bounds: (view: string) => () => timed(
      () => rowsOf(`SELECT min(bbox.xmin), min(bbox.ymin), max(bbox.xmax), max(bbox.ymax) FROM ${view}`),
      (rows) => describeBounds(rows[0]!.map(Number)),
    ),
    tile: (view: string, z: number, x: number, y: number) => () => timed(async () => {
      const [w, s, e, n] = tileBounds(z, x, y, 64);
      const rows = await rowsOf(`SELECT st_asbinary(geometry), id, colour FROM ${view} WHERE bbox.xmax >= ${w} AND bbox.xmin <= ${e} AND bbox.ymax >= ${s} AND bbox.ymin <= ${n} LIMIT ${tileMaxFeatures + 1}`);
      const features = rows.map((row) => ({ wkb: (row[0] as { bytes: Uint8Array }).bytes, properties: { id: Number(row[1]), colour: String(row[2]) } }));
      return encodeTile(features, z, x, y, { layerName: 'result', maxFeatures: tileMaxFeatures });
    }, (tile) => (tile.features === 0 ? 'no features' : `a tile of ${tile.bytes.byteLength} bytes`)),
  };
}

function describeBounds(bounds: number[]): string {
  return `bounds [${bounds.map((value) => value.toFixed(4)).join(', ')}]`;
}

const FILTERED = "SELECT id, score, colour, zone FROM points WHERE score > 900 AND colour = 'red' ORDER BY score DESC";
const GROUPED = 'SELECT colour, zone, count(*) AS n, avg(score) AS mean FROM points GROUP BY colour, zone ORDER BY colour, zone';
const ORDERED = 'SELECT id, score FROM points ORDER BY id';
const TILE_SQL = 'SELECT id, colour, geometry, bbox FROM points';

/** The cases, each with its service side (queries made beforehand where it needs one) and its plain side. */
async function prepareCases(order: QueryClientOrder, connection: DuckDBConnection): Promise<BenchCase[]> {
  const service = serviceSide(order.origin);
  const plain = plainSide(connection, order.tileMaxFeatures);
  const { points, random } = order.sources;
  const firstPage = (name: string, sql: string): BenchCase => ({ name, service: service.firstPage(points, sql), plain: plain.page(sql) });
  const cases = [
    firstPage(`first page of SELECT * (limit ${PAGE_LIMIT})`, 'SELECT * FROM points'),
    firstPage('filter with ORDER BY', FILTERED),
    firstPage('GROUP BY aggregate', GROUPED),
    { name: `deep page (offset ${DEEP_OFFSET.toLocaleString('en-US')})`, service: service.page(await service.makeQuery(points, ORDERED), DEEP_OFFSET), plain: plain.page(ORDERED, DEEP_OFFSET) },
    { name: 'bounds of the whole result', service: service.bounds(await service.makeQuery(points, 'SELECT * FROM points')), plain: plain.bounds('points') },
  ];
  const tiles = [['', points, 'points', 4, 8, 5], ['', points, 'points', 12, 2100, 1400], [', rows in random order', random, 'points_random', 4, 8, 5]] as const;
  for (const [label, source, view, z, x, y] of tiles) {
    cases.push({ name: `one tile at z=${z}${label}`, service: service.tile(await service.makeQuery(source, TILE_SQL), z, x, y), plain: plain.tile(view, z, x, y) });
  }
  return cases;
}

/** The two sides in a random order. */
function pickOrder(random: () => number): readonly Side[] {
  return random() < 0.5 ? SIDES : [...SIDES].reverse();
}

/**
 * One case in one mode: an untimed run of each side, then `runs` timed runs of each, alternated run by run with
 * a random side first each time, so that a slow spell of the machine falls on both sides.
 */
async function timeCase(benchCase: BenchCase, pauseMs: number, runs: number, random: () => number) {
  const warm: Partial<Record<Side, Outcome>> = {};
  for (const side of pickOrder(random)) warm[side] = await benchCase[side]();
  const timed: TimedRun[] = [];
  for (let run = 0; run < runs; run++) {
    for (const side of pickOrder(random)) {
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      const { ms, steps } = await benchCase[side]();
      timed.push(steps ? { side, ms, steps } : { side, ms });
    }
  }
  return { warm: warm as Record<Side, Outcome>, timed };
}

/** Every round: each (case, mode) pair once, the pairs in a random order. */
async function measure(order: QueryClientOrder): Promise<QueryClientReport> {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(order.threads) });
  const connection = await instance.connect();
  try {
    await connection.run(`CREATE VIEW points AS SELECT * FROM read_parquet('${order.paths.points.replaceAll("'", "''")}')`);
    await connection.run(`CREATE VIEW points_random AS SELECT * FROM read_parquet('${order.paths.random.replaceAll("'", "''")}')`);
    const cases = await prepareCases(order, connection);
    const random = createRandom(order.seed);
    const answers: QueryClientReport['answers'] = {};
    const rounds: CaseRound[] = [];
    for (let round = 1; round <= order.rounds; round++) {
      const pairs = cases.flatMap((benchCase) => MODES.map((mode) => ({ benchCase, mode })));
      for (let index = pairs.length - 1; index > 0; index--) {
        const other = Math.floor(random() * (index + 1));
        [pairs[index], pairs[other]] = [pairs[other]!, pairs[index]!];
      }
      for (const { benchCase, mode } of pairs) {
        const { warm, timed } = await timeCase(benchCase, mode === 'pause' ? order.pauseMs : 0, order.runs, random);
        answers[benchCase.name] ??= { service: warm.service.describe(), plain: warm.plain.describe() };
        rounds.push({ name: benchCase.name, mode, round, runs: timed });
      }
    }
    return { names: cases.map((benchCase) => benchCase.name), answers, rounds };
  } finally {
    connection.closeSync();
    instance.closeSync();
    agent.destroy();
  }
}

process.once('message', (order: QueryClientOrder) => {
  void measure(order).then(
    (report) => process.send!(report, () => process.exit(0)),
    (error: unknown) => process.send!({ error: error instanceof Error ? error.stack ?? error.message : String(error) }, () => process.exit(1)),
  );
});
