import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseWithFriendlyErrors } from '../schemas/parse.ts';

/** One setting: its environment variable, its default and the help line the README repeats. */
export interface SettingDefinition {
  env: string;
  default: string;
  help: string;
}

/**
 * Every setting geoshelf reads. The README lists each one; a test fails when one is missing there.
 * Defaults are strings because they come from the environment; `CONFIG_SCHEMA` parses them.
 */
export const SETTINGS = {
  host: { env: 'HOST', default: 'localhost', help: 'Address the server listens on. Use 0.0.0.0 in a container.' },
  port: { env: 'PORT', default: '3000', help: 'Port the server listens on.' },
  baseUrl: {
    env: 'GEOSHELF_BASE_URL',
    default: '',
    help: 'Public origin written into every link ({base_url}). Empty means http://localhost:PORT, right for `npm start`; set it for a production build.',
  },
  storageBaseUrl: {
    env: 'GEOSHELF_STORAGE_BASE_URL',
    default: '',
    help: 'Where data files are downloaded from ({storage_base_url}). Empty means {base_url}/data, which `npm start` serves from GEOSHELF_DATA_DIR.',
  },
  catalogDir: { env: 'GEOSHELF_CATALOG_DIR', default: 'catalog-data', help: 'Folder of catalog records and the id ledger.' },
  dataDir: {
    env: 'GEOSHELF_DATA_DIR',
    default: 'catalog-data/data',
    help: 'Folder of the data files that source paths point into. The build reads them; `npm start` serves them under /data.',
  },
  distDir: { env: 'GEOSHELF_DIST_DIR', default: 'dist', help: 'Output folder of the static tree.' },
  cacheDir: {
    env: 'GEOSHELF_CACHE_DIR',
    default: '.geoshelf-cache',
    help: 'Folder of build caches (parsed records, data statistics). Safe to delete; the next build is slower.',
  },
  ledgerMode: {
    env: 'GEOSHELF_LEDGER',
    default: 'update',
    help: '`update` gives new records the next free ids, stamps removed ones, and writes the ledger; `frozen` fails the build instead (use it in CI so ids and removals are always committed).',
  },
  searchSliceTerms: {
    env: 'GEOSHELF_SEARCH_SLICE_TERMS',
    default: '40',
    help: 'How many search terms per collection get a prebuilt first page. Other searches are computed by the server.',
  },
  cacheMaxAge: {
    env: 'GEOSHELF_CACHE_MAX_AGE',
    default: '300',
    help: 'Seconds in the Cache-Control max-age of catalog documents. Revalidation is cheap: the ETag is the content hash.',
  },
  staticCacheMb: {
    env: 'GEOSHELF_STATIC_CACHE_MB',
    default: '256',
    help: 'Memory budget in MiB for static bodies the server keeps in memory; files beyond it are read on demand and evicted least-recently-used.',
  },
  buildConcurrency: {
    env: 'GEOSHELF_BUILD_CONCURRENCY',
    default: '0',
    help: 'Worker threads that compress and write the documents of a build; 0 means one per CPU core.',
  },
  queryKeys: {
    env: 'GEOSHELF_QUERY_KEYS',
    default: '',
    help: 'Keys of query tokens: comma-separated `kid:key` pairs, each key 32 bytes in base64url; the first encrypts, all decrypt (rotation). Empty means a random key per process, with a warning: tokens then work only on that process.',
  },
  queryTimeoutMs: { env: 'GEOSHELF_QUERY_TIMEOUT_MS', default: '10000', help: 'Deadline of one query, page, bounds or tile, in milliseconds; past it the answer is 504.' },
  queryWorkers: { env: 'GEOSHELF_QUERY_WORKERS', default: '2', help: 'Worker processes that run queries, one query each at a time.' },
  querySpareWorkers: {
    env: 'GEOSHELF_QUERY_SPARE_WORKERS',
    default: '2',
    help: 'Extra worker processes for tasks that run longer than half a second (or whose query did before), so that short queries and tiles are not held up behind them; 0 turns them off.',
  },
  queryQueue: {
    env: 'GEOSHELF_QUERY_QUEUE',
    default: '1024',
    help: 'Hard cap on tasks waiting for a worker. Below it, a task is accepted while its expected wait and run fit the deadline; otherwise, or when its wait runs out, the answer is 503 with Retry-After.',
  },
  queryClientQueue: {
    env: 'GEOSHELF_QUERY_CLIENT_QUEUE',
    default: '256',
    help: 'Most tasks one client (remote address; an IPv6 /64) may have waiting for a worker; past it its tasks answer 503 with Retry-After, while other clients are still served. Clients take turns at the workers. Behind a proxy, list it in GEOSHELF_TRUSTED_PROXIES, or every client counts as the proxy.',
  },
  queryMemoryMb: { env: 'GEOSHELF_QUERY_MEMORY_MB', default: '1024', help: 'DuckDB memory limit of a query, in MiB; a worker using 512 MiB more than this is killed.' },
  queryThreads: { env: 'GEOSHELF_QUERY_THREADS', default: '2', help: 'DuckDB threads of a query.' },
  queryTokenTtl: { env: 'GEOSHELF_QUERY_TOKEN_TTL', default: '3600', help: 'Seconds a query token stays valid for pages, bounds and tiles.' },
  queryMaxResponseBytes: { env: 'GEOSHELF_QUERY_MAX_RESPONSE_BYTES', default: '8388608', help: 'Cap on the rows of one query response, in bytes of JSON; past it the page is cut and response_truncated is true.' },
  queryDownloadMaxRows: {
    env: 'GEOSHELF_QUERY_DOWNLOAD_MAX_ROWS',
    default: '100000',
    help: 'Most rows a whole-result download (GeoParquet, GeoJSON, CSV) may hold; a larger result answers 422 download_too_many_rows rather than a cut file.',
  },
  tileMaxFeatures: { env: 'GEOSHELF_TILE_MAX_FEATURES', default: '20000', help: 'Cap on features in one vector tile; past it the tile holds the first ones and carries the header X-Geoshelf-Tile-Truncated.' },
  tileCacheMb: {
    env: 'GEOSHELF_TILE_CACHE_MB',
    default: '64',
    help: 'Memory budget in MiB for vector tiles the query service keeps (least recently used first out); a tile of one query and build is made once. 0 keeps none.',
  },
  remoteScan: {
    env: 'GEOSHELF_REMOTE_SCAN',
    default: 'full',
    help: 'What the build reads of a source in object storage: `full` reads each file once per version (its checksum, distinct values, validity, bounds: the same metadata as a local file); `footer` reads a GeoParquet file\'s footer and a PMTiles header only (`npm run build -- --shallow`).',
  },
  remoteCacheDir: {
    env: 'GEOSHELF_REMOTE_CACHE_DIR',
    default: '.geoshelf-remote',
    help: 'Folder of the query service\'s local copies of sources in object storage (storage locations with backend_type s3 or http); each server process keeps its own inside it.',
  },
  remoteCacheMb: {
    env: 'GEOSHELF_REMOTE_CACHE_MB',
    default: '4096',
    help: 'Disk budget in MiB for those copies, least recently used out first; a remote file larger than this cannot be queried.',
  },
  remoteRevalidateS: {
    env: 'GEOSHELF_REMOTE_REVALIDATE_S',
    default: '30',
    help: 'Seconds a copy of a remote file is trusted; then the next query asks the store whether the object changed (one HEAD) and fetches it again if so.',
  },
  sendIdleTimeoutMs: {
    env: 'GEOSHELF_SEND_IDLE_TIMEOUT_MS',
    default: '30000',
    help: 'A streamed response (a query download, a download-zip, a data file) whose client takes no bytes for this long, in milliseconds, is cut: its connection is closed and its open or temporary file released.',
  },
  trustedProxies: {
    env: 'GEOSHELF_TRUSTED_PROXIES',
    default: '',
    help: 'Comma-separated IP addresses of the proxies in front of the server (nginx, a load balancer) whose X-Forwarded-For it believes: a request from one counts as the client that header names (the nearest address that is not a trusted proxy) in the query pool\'s turns and the MCP rate. Empty trusts none: every client is its socket\'s address, so behind a proxy all clients share one. `npm run fleet` sets 127.0.0.1.',
  },
  shutdownGraceMs: {
    env: 'GEOSHELF_SHUTDOWN_GRACE_MS',
    default: '10000',
    help: 'On SIGTERM or SIGINT the server refuses new connections at once and gives the requests it accepted this long, in milliseconds, to finish; then it exits 0, or 1 saying how many it cut.',
  },
  mcpRate: {
    env: 'GEOSHELF_MCP_RATE',
    default: '20',
    help: 'Requests per second each client (remote address, or behind a trusted proxy the one it names) may send to /mcp, with bursts of twice as many; past it the answer is 429 with Retry-After. 0 turns the bound off.',
  },
  siteQueryOrigin: {
    env: 'GEOSHELF_SITE_QUERY_ORIGIN',
    default: '',
    help: "Origin of the query service that the web app's SQL console calls, written into the pages at build time. Empty means the pages' own origin (one process: `npm start`); set it when the pages are on object storage and the query service runs elsewhere.",
  },
  siteBrowserSqlMb: {
    env: 'GEOSHELF_SITE_BROWSER_SQL_MB',
    default: '50',
    help: 'Largest source, in MB, that the SQL console offers to query entirely in the browser (parquet-wasm and duckdb-wasm); 0 turns the in-browser mode off.',
  },
  ci: { env: 'CI', default: '', help: 'When set (any non-empty value), progress output stays quiet; set by most CI systems.' },
} as const satisfies Record<string, SettingDefinition>;

const positiveInt = z.coerce.number().int().positive();
const optionalUrl = z.string().transform((value) => value.replace(/\/+$/, ''))
  .refine((value) => value === '' || URL.canParse(value), 'must be an absolute URL such as https://catalog.example.org');

/** A folder on this machine: a URL given here would be read as a relative path and fail later, far from the cause. */
const localFolder = (remote = 'a URL') => z.string().min(1).refine((value) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(value), `must be a folder on this machine, not ${remote}`);

const CONFIG_SCHEMA = z.object({
  host: z.string().min(1),
  port: z.coerce.number().int().min(0).max(65535),
  baseUrl: optionalUrl,
  storageBaseUrl: optionalUrl,
  catalogDir: localFolder(),
  dataDir: localFolder('a URL: declare data in object storage as a storage location with backend_type s3 or http (README, "Data in object storage")'),
  distDir: localFolder(),
  cacheDir: localFolder(),
  ledgerMode: z.enum(['update', 'frozen']),
  remoteScan: z.enum(['full', 'footer']),
  searchSliceTerms: z.coerce.number().int().min(0),
  cacheMaxAge: z.coerce.number().int().min(0),
  staticCacheMb: positiveInt,
  buildConcurrency: z.coerce.number().int().min(0),
  queryKeys: z.string(),
  queryTimeoutMs: z.coerce.number().int().min(100),
  queryWorkers: z.coerce.number().int().min(1).max(64),
  querySpareWorkers: z.coerce.number().int().min(0).max(64),
  queryQueue: z.coerce.number().int().min(0),
  queryClientQueue: z.coerce.number().int().min(1),
  queryMemoryMb: z.coerce.number().int().min(64),
  queryThreads: z.coerce.number().int().min(1).max(64),
  queryTokenTtl: z.coerce.number().int().min(60),
  queryMaxResponseBytes: z.coerce.number().int().min(1024),
  queryDownloadMaxRows: z.coerce.number().int().min(1),
  tileMaxFeatures: z.coerce.number().int().min(1),
  tileCacheMb: z.coerce.number().int().min(0),
  remoteCacheDir: localFolder(),
  remoteCacheMb: z.coerce.number().int().min(1),
  remoteRevalidateS: z.coerce.number().min(0),
  sendIdleTimeoutMs: z.coerce.number().int().min(100),
  trustedProxies: z.string()
    .transform((value) => value.split(',').map((address) => address.trim()).filter(Boolean))
    .refine((addresses) => addresses.every((address) => isIP(address) !== 0), 'must be comma-separated IP addresses, such as 127.0.0.1,::1'),
  shutdownGraceMs: z.coerce.number().int().min(0),
  mcpRate: z.coerce.number().min(0),
  siteQueryOrigin: optionalUrl,
  siteBrowserSqlMb: z.coerce.number().min(0),
  ci: z.string().transform((value) => value !== '' && value !== 'false' && value !== '0'),
});

/** Settings after parsing: paths absolute, URLs resolved. */
export type Config = z.infer<typeof CONFIG_SCHEMA>;

/**
 * Reads every setting from the environment, with `overrides` (already in setting names) taking precedence.
 * @example loadConfig(process.env, { distDir: '/tmp/dist' })
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Record<keyof typeof SETTINGS, string | number>> = {}): Config {
  const raw: Record<string, string> = {};
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const override = overrides[name as keyof typeof SETTINGS];
    raw[name] = override !== undefined ? String(override) : (env[setting.env] ?? setting.default);
  }
  const config = parseWithFriendlyErrors(CONFIG_SCHEMA, raw, {
    source: 'settings',
    describePath: (path) => SETTINGS[path[0] as keyof typeof SETTINGS]?.env ?? path.join('.'),
  });
  const publicHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const baseUrl = config.baseUrl || `http://${publicHost}:${config.port}`;
  return {
    ...config,
    baseUrl,
    storageBaseUrl: config.storageBaseUrl || `${baseUrl}/data`,
    catalogDir: resolve(config.catalogDir),
    dataDir: resolve(config.dataDir),
    distDir: resolve(config.distDir),
    cacheDir: resolve(config.cacheDir),
    remoteCacheDir: resolve(config.remoteCacheDir),
  };
}

/**
 * The environment variables that make `loadConfig()` in a child process give back `config`.
 * @example spawn(process.execPath, ['server/main.ts'], { env: { ...process.env, ...settingsEnvironment(config) } })
 */
export function settingsEnvironment(config: Config): Record<string, string> {
  return Object.fromEntries(Object.entries(SETTINGS).map(([name, setting]) => [setting.env, String(config[name as keyof Config])]));
}
