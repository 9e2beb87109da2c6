/**
 * `npm run fleet`: geoshelf as it runs scaled out. N replicas of `npm run serve` on consecutive ports behind
 * Debian's nginx in round robin, sharing one GEOSHELF_QUERY_KEYS, so a query made on one replica pages on
 * any other. nginx runs from docs/nginx.conf, the configuration users copy, rendered into a scratch folder.
 * SIGHUP restarts the replicas one at a time; SIGINT or SIGTERM stops nginx, then the replicas, gracefully.
 *
 * `geoshelf fleet` (cli/serve-commands.ts) reads the command line; `node scripts/fleet.ts` runs `geoshelf fleet`.
 *
 * @example npm run fleet                              # 2 replicas, nginx on http://localhost:8080
 * @example npm run fleet -- --replicas 3 --port 9000 --no-build
 * @example kill -HUP <pid of the fleet>               # rolling restart
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT } from '../cli/exit-codes.ts';
import { runAsGeoshelf } from '../cli/run-as-geoshelf.ts';
import { CATALOG_ROUTES, SERVICE_ROUTES } from '../core/api/catalog/routes.ts';
import { loadConfig, SETTINGS } from '../runtime/config.ts';
import { readManifestRoot } from '../runtime/manifest.ts';
import { buildBeforeServing } from '../server/main.ts';
import { fillPlaceholders, hasCommand, NGINX_MISSING, readLogTail, startNginx } from './nginx.ts';
import { exited, prefixOutput, stopWhenOrphaned, waitForAnswer } from './processes.ts';

export { hasCommand };

/** The nginx configuration users copy; the fleet renders it rather than holding a second one. */
export const NGINX_TEMPLATE = new URL('../docs/nginx.conf', import.meta.url);
/** Each replica is `geoshelf serve`. */
const REPLICA_COMMAND = [new URL('../cli/geoshelf.ts', import.meta.url).pathname, 'serve'];
const HEALTH_PATH = CATALOG_ROUTES.health.path;
const READY_PATH = SERVICE_ROUTES.getReadiness.path;
/** How often the fleet asks each replica whether it is ready. */
const READY_PROBE_MS = 2_000;

/** What a replica's readiness probe said: 200, 503, or no answer (starting, restarting, killed). */
export type ReplicaReadiness = 'ready' | 'not ready' | 'no answer';

/**
 * The replicas nginx must leave out (`down`): those that answer that they are not ready. One that does not answer
 * stays in, for nginx's own failure handling (`max_fails`) and the fleet's restarts. When no replica is ready, none
 * is left out: each answers 503 with what it lacks, which says more than nginx's 502 with no replica at all.
 */
export function replicasToLeaveOut(readiness: ReadonlyMap<number, ReplicaReadiness>): Set<number> {
  const notReady = [...readiness].filter(([, state]) => state === 'not ready').map(([slot]) => slot);
  const ready = [...readiness.values()].some((state) => state === 'ready');
  return new Set(ready ? notReady : []);
}

/** What the command line asks for. */
export interface FleetOptions {
  replicas: number;
  port: number;
  build: boolean;
}

/** Values of docs/nginx.conf's placeholders. */
export interface NginxValues {
  listen: string;
  /** host:port of each replica; the template's `{{replica}}` line is repeated for each. */
  replicas: string[];
  cacheDir: string;
}

/** One running replica: its slot (1-based), port and process. */
interface Replica {
  index: number;
  port: number;
  child: ChildProcess;
  /** Set once it answers; only a replica that was up is started again when it dies, so one that cannot start does not loop. */
  up: boolean;
  /** Set when the fleet stops it on purpose, so its exit does not start it again. */
  stopping: boolean;
}

/**
 * Fills docs/nginx.conf: the line holding `{{replica}}` once per replica, then `{{listen}}` and `{{cache_dir}}`.
 * @example renderNginxConf(template, { listen: '127.0.0.1:8080', replicas: ['127.0.0.1:8081'], cacheDir: '/tmp/tiles' })
 */
export function renderNginxConf(template: string, values: NginxValues): string {
  const repeated = template.split('\n').flatMap((line) => {
    // Comments name the placeholders for readers; only directives are filled.
    if (line.trimStart().startsWith('#') || !line.includes('{{replica}}')) return [line];
    return values.replicas.map((address) => line.replaceAll('{{replica}}', address));
  });
  return fillPlaceholders(repeated.join('\n'), { listen: values.listen, cache_dir: values.cacheDir }, 'docs/nginx.conf');
}

/** Settings every replica shares, and where the proxy listens and is probed. */
interface FleetPlan {
  options: FleetOptions;
  env: NodeJS.ProcessEnv;
  baseUrl: string;
  /** What nginx's `listen` gets: host:port. */
  listen: string;
  /** A local origin that reaches nginx, for health probes. */
  probeOrigin: string;
}

/**
 * nginx and the replicas, started, restarted and stopped together. Each replica slot holds the promise of its
 * current process, so a restart that comes while a crashed replica is being started again waits for it.
 */
class Fleet {
  readonly #plan: FleetPlan;
  /** nginx's scratch folder (configuration, pid, log, temp files, tile cache), made once the replicas are up. */
  #prefix = '';
  readonly #slots: Promise<Replica>[] = [];
  #nginx: ChildProcess | undefined;
  #stopping = false;
  #restarting = false;
  /** docs/nginx.conf as read at start, rendered again when the replicas nginx leaves out change. */
  #template = '';
  /** Slots nginx leaves out because they answer that they are not ready. */
  #leftOut = new Set<number>();
  #readinessTimer: NodeJS.Timeout | undefined;
  #noneReadyWarned = false;
  #following: Promise<void> | undefined;

  constructor(plan: FleetPlan) {
    this.#plan = plan;
  }

  /** Starts the replicas (in parallel), then nginx in front of them once they answer. */
  async start(): Promise<void> {
    const { options } = this.#plan;
    await Promise.all(Array.from({ length: options.replicas }, (_, slot) => this.#launch(slot + 1)));
    this.#prefix = await mkdtemp(join(tmpdir(), 'geoshelf-fleet-'));
    this.#template = await readFile(NGINX_TEMPLATE, 'utf8');
    this.#leftOut = replicasToLeaveOut(await this.#probeReadiness());
    const { child: nginx, errorLog } = await startNginx(this.#prefix, this.#siteConf(), 'npm run fleet (scripts/fleet.ts) around docs/nginx.conf');
    this.#nginx = nginx;
    prefixOutput(nginx, 'nginx');
    nginx.once('exit', (code) => {
      if (this.#stopping) return;
      const log = readLogTail(errorLog);
      console.error([`✖ nginx exited (code ${code}); the end of its log:`, ...log.map((line) => `[nginx] ${line}`)].join('\n'));
      void this.stop('nginx exited', true);
    });
    await waitForAnswer(`${this.#plan.probeOrigin}${HEALTH_PATH}`, 'nginx', { child: nginx });
    this.#readinessTimer = setInterval(() => void this.#followReadiness(), READY_PROBE_MS);
    console.log(`fleet ready: ${this.#plan.baseUrl}/ (nginx pid ${nginx.pid}, round robin over ${options.replicas} replica(s) on ports ${options.port + 1}–${options.port + options.replicas}; configuration and logs in ${this.#prefix})`);
  }

  /** Restarts each replica in turn; the next one stops only once nginx sends requests to the restarted one again. */
  async rollingRestart(): Promise<void> {
    if (this.#restarting || this.#stopping) return console.warn('⚠ a rolling restart or a stop is already under way');
    this.#restarting = true;
    console.log('SIGHUP: rolling restart');
    if (this.#slots.length === 1) console.warn('⚠ with one replica, requests arriving while it restarts are refused (502); run two or more');
    try {
      for (let index = 1; index <= this.#slots.length && !this.#stopping; index++) {
        const replica = await this.#slots[index - 1]!.catch(() => undefined);
        if (replica) {
          replica.stopping = true;
          replica.child.kill('SIGTERM');
          const code = await exited(replica.child);
          if (code !== 0) console.error(`✖ replica ${index} exited with code ${code} while draining`);
        }
        const fresh = await this.#launch(index);
        await this.#followReadiness();
        if (this.#leftOut.has(index)) {
          console.warn(`⚠ replica ${index} is back but not ready: nginx leaves it out, and the restart goes on`);
          continue;
        }
        // nginx left the replica out while it was down (fail_timeout); stopping the next one before it is back in
        // would leave nginx with no replica at all.
        const address = `127.0.0.1:${fresh.port}`;
        await waitForAnswer(`${this.#plan.probeOrigin}${HEALTH_PATH}`, `nginx routing to replica ${index}`, { accept: (response) => response.headers.get('x-upstream')?.split(', ').at(-1) === address });
      }
      console.log('rolling restart done: every replica restarted');
    } catch (error) {
      console.error(`✖ rolling restart failed: ${(error as Error).message}`);
    } finally {
      this.#restarting = false;
    }
  }

  /** Stops nginx gracefully (it finishes the requests it holds), then the replicas (they drain), then exits: 1 after a failure. */
  async stop(reason: string, failed = false): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    clearInterval(this.#readinessTimer);
    console.log(`${reason}: stopping nginx, which finishes the requests it holds, then the replicas`);
    if (this.#nginx) {
      this.#nginx.kill('SIGQUIT');
      await exited(this.#nginx);
    }
    const replicas = (await Promise.allSettled(this.#slots)).flatMap((slot) => (slot.status === 'fulfilled' ? [slot.value] : []));
    const codes = await Promise.all(replicas.map((replica) => (replica.child.kill('SIGTERM'), exited(replica.child))));
    if (this.#prefix) await rm(this.#prefix, { recursive: true, force: true });
    process.exit(!failed && codes.every((code) => code === 0) ? 0 : 1);
  }

  /** Last resort when this script dies: nginx must not keep the port (replicas stop when their IPC channel closes). */
  killNginx(): void {
    if (this.#nginx?.exitCode === null) this.#nginx.kill('SIGTERM');
  }

  /** docs/nginx.conf for this fleet: every replica, those left out marked `down`. */
  #siteConf(): string {
    const { options } = this.#plan;
    const replicas = Array.from({ length: options.replicas }, (_, slot) => `127.0.0.1:${options.port + slot + 1}${this.#leftOut.has(slot + 1) ? ' down' : ''}`);
    return renderNginxConf(this.#template, { listen: this.#plan.listen, replicas, cacheDir: join(this.#prefix, 'tiles') });
  }

  /** Each replica's readiness, asked directly (not through nginx), all at once. */
  async #probeReadiness(): Promise<Map<number, ReplicaReadiness>> {
    const { options } = this.#plan;
    const states = await Promise.all(Array.from({ length: options.replicas }, async (_, slot): Promise<ReplicaReadiness> => {
      const response = await fetch(`http://127.0.0.1:${options.port + slot + 1}${READY_PATH}`, { signal: AbortSignal.timeout(READY_PROBE_MS) }).catch(() => undefined);
      await response?.body?.cancel();
      return response?.status === 200 ? 'ready' : response?.status === 503 ? 'not ready' : 'no answer';
    }));
    return new Map(states.map((state, slot) => [slot + 1, state]));
  }

  /** Asks every replica whether it is ready and, when the replicas to leave out change, has nginx reload its configuration. */
  #followReadiness(): Promise<void> {
    // One round at a time: a round started by the timer and one by a rolling restart share the answer.
    this.#following ??= this.#followReadinessOnce().finally(() => {
      this.#following = undefined;
    });
    return this.#following;
  }

  async #followReadinessOnce(): Promise<void> {
    if (this.#stopping || !this.#nginx) return;
    const readiness = await this.#probeReadiness();
    const leftOut = replicasToLeaveOut(readiness);
    const changed = [...new Set([...leftOut, ...this.#leftOut])].filter((slot) => leftOut.has(slot) !== this.#leftOut.has(slot));
    const noneReady = ![...readiness.values()].some((state) => state === 'ready') && [...readiness.values()].some((state) => state === 'not ready');
    if (noneReady && !this.#noneReadyWarned) console.warn('⚠ no replica is ready (GET /api/health/ready answers 503: their data folder lacks sources); nginx keeps them all, and they answer 503 for what they cannot read');
    this.#noneReadyWarned = noneReady;
    if (changed.length === 0 || this.#stopping) return;
    this.#leftOut = leftOut;
    for (const slot of changed) {
      console.log(leftOut.has(slot) ? `replica ${slot} is not ready (GET /api/health/ready answers 503): nginx leaves it out until it is` : `replica ${slot} is ready: nginx sends it requests again`);
    }
    await writeFile(join(this.#prefix, 'site.conf'), this.#siteConf());
    // SIGHUP: nginx reads its configuration again and swaps its workers, finishing the requests they hold.
    this.#nginx.kill('SIGHUP');
  }

  /** Starts the replica of a slot and resolves once it answers its health route. */
  #launch(index: number, delayMs = 0): Promise<Replica> {
    const started = new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => this.#startReplica(index));
    this.#slots[index - 1] = started;
    return started;
  }

  async #startReplica(index: number): Promise<Replica> {
    if (this.#stopping) throw new Error('the fleet is stopping');
    const port = this.#plan.options.port + index;
    const child = spawn(process.execPath, REPLICA_COMMAND, { env: { ...this.#plan.env, [SETTINGS.port.env]: String(port) }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], detached: true });
    const replica: Replica = { index, port, child, up: false, stopping: false };
    prefixOutput(child, `replica ${index}`);
    child.once('exit', (code, signal) => {
      if (this.#stopping || replica.stopping || !replica.up) return;
      console.error(`✖ replica ${index} (pid ${child.pid}) exited (${signal ?? `code ${code}`}); starting it again`);
      this.#launch(index, 500).catch((error: Error) => console.error(`✖ replica ${index} did not start again: ${error.message}`));
    });
    await waitForAnswer(`http://127.0.0.1:${port}${HEALTH_PATH}`, `replica ${index}`, { child });
    replica.up = true;
    console.log(`replica ${index} (pid ${child.pid}) is up on 127.0.0.1:${port}`);
    return replica;
  }
}

/** Builds when asked, and works out the replicas' shared settings and the proxy's address. */
async function planFleet(options: FleetOptions): Promise<FleetPlan> {
  const config = loadConfig({ ...process.env, [SETTINGS.port.env]: String(options.port) });
  if (options.build) await buildBeforeServing(config);
  // The root alone: its settings, and that every part it names is there; each replica reads the whole manifest.
  const built = await readManifestRoot(config.distDir);
  if (!built) throw new Error(`${config.distDir} holds no build; run npm run fleet without --no-build, or npm run build`);
  if (built.settings.base_url !== config.baseUrl) console.warn(`⚠ ${config.distDir} was built for ${built.settings.base_url}, so its links point there, not at ${config.baseUrl}; run npm run fleet without --no-build to rebuild them`);
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const env = {
    ...process.env,
    [SETTINGS.host.env]: '127.0.0.1',
    [SETTINGS.baseUrl.env]: config.baseUrl,
    // One key for the whole run, rolling restarts included, so every token works on every replica.
    [SETTINGS.queryKeys.env]: config.queryKeys || `fleet:${randomBytes(32).toString('base64url')}`,
    // nginx reaches the replicas from loopback and appends the address it saw to X-Forwarded-For: believing it there
    // gives each real client its own turn in the query pool and its own MCP rate, not one for the whole proxy.
    [SETTINGS.trustedProxies.env]: config.trustedProxies.length > 0 ? config.trustedProxies.join(',') : '127.0.0.1',
  };
  const probeHost = ['0.0.0.0', '::', 'localhost'].includes(config.host) ? '127.0.0.1' : host;
  return { options, env, baseUrl: config.baseUrl, listen: `${host}:${options.port}`, probeOrigin: `http://${probeHost}:${options.port}` };
}

/**
 * Runs the fleet: resolves with 0 once nginx and the replicas are up (the process then runs until a signal). When it
 * cannot start, it says why and ends with 1: at once without nginx, otherwise by exiting, which stops the replicas
 * already started.
 */
export async function runFleet(options: FleetOptions): Promise<number> {
  if (!hasCommand('nginx')) {
    console.error(`✖ ${NGINX_MISSING}`);
    return EXIT.failed;
  }
  try {
    const fleet = new Fleet(await planFleet(options));
    process.on('exit', () => fleet.killNginx());
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void fleet.stop(signal));
    process.on('SIGHUP', () => void fleet.rollingRestart());
    stopWhenOrphaned(() => void fleet.stop('the parent process exited'));
    await fleet.start();
  } catch (error) {
    console.error(`✖ ${(error as Error).message}`);
    process.exit(EXIT.failed);
  }
  console.log(`kill -HUP ${process.pid} restarts the replicas one at a time; Ctrl-C stops the fleet`);
  return EXIT.ok;
}

if (import.meta.main) runAsGeoshelf(['fleet']);
