import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { CatalogIndex } from '../core/catalog-index.ts';
import { REMOTE_BACKENDS } from '../core/constants.ts';
import type { Readiness, UnreachableSource } from '../schemas/discovery.ts';

/**
 * Readiness (`GET /api/health/ready`): whether this replica can read every source it serves: the files the
 * catalog stores in its data folder, and the stores of sources in object storage. `/api/health` stays a liveness
 * check. A replica started with an empty or wrong data folder, or cut off from its bucket, is alive but not
 * ready: a proxy takes it out rather than send it queries it can only answer with 503. Sources the service does
 * not read (an API source, a location of another backend) do not count.
 */

/** How long an answer stands before a probe starts a new check; probes in between get the last one. */
const RECHECK_MS = 5_000;
/** Files looked at concurrently: a check of 300,000 files stays a background trickle, not a burst of descriptors. */
const CHECK_CONCURRENCY = 16;
/** Unreachable sources named in an answer; the count says how many there are in all. */
export const READINESS_LISTED = 100;

/** A source this replica reads, and the probe that tells whether it can: its file, or its storage location. */
interface CheckedSource extends UnreachableSource {
  probe: string;
}

/** What to look at: the sources, and by probe key how to look. */
export interface SourceChecks {
  sources: CheckedSource[];
  probes: Map<string, () => Promise<boolean>>;
}

/**
 * Every source this replica reads: those under `storage_base_url` in the data folder, each probed by looking at
 * its file (or folder, such as a `.gdb`), and those in object storage (a location with `backend_type` s3 or
 * http), probed a location at a time by asking the store for one of its objects: asking for every object would
 * cost a request per source on each check, and a store that answers for one answers for the others.
 */
export function catalogSources(index: CatalogIndex, dataDir: string, env: NodeJS.ProcessEnv = process.env): SourceChecks {
  const prefix = `${index.settings.storageBaseUrl}/`;
  const sources: CheckedSource[] = [];
  const probes = new Map<string, () => Promise<boolean>>();
  for (const { dataset } of index.datasetsById.values()) {
    for (const file of dataset.files) {
      for (const link of file.formats) {
        for (const source of link.sources) {
          if (source.location.type !== 'file') continue;
          const named = { dataset_id: dataset.id, file_id: file.id, source_id: source.id, url: source.url ?? '' };
          if (source.url?.startsWith(prefix)) {
            const path = join(dataDir, source.location.path);
            probes.set(path, () => access(path, constants.R_OK).then(() => true, () => false));
            sources.push({ ...named, probe: path });
            continue;
          }
          const location = source.storage_location_id === null ? undefined : index.storageById.get(source.storage_location_id);
          if (!location || !REMOTE_BACKENDS.has(location.backend_type)) continue;
          const key = `storage location ${location.id}`;
          const objectPath = source.location.path;
          if (!probes.has(key)) {
            probes.set(key, async () => {
              const { openRemoteObject } = await import('../runtime/remote-object.ts');
              return openRemoteObject(location, objectPath, env).head().then(() => true, () => false);
            });
          }
          sources.push({ ...named, probe: key });
        }
      }
    }
  }
  return { sources, probes };
}

/** Runs every probe (16 at a time) and answers which sources cannot be read. */
export async function checkSources({ sources, probes }: SourceChecks, now = () => new Date()): Promise<Readiness> {
  const failed = new Set<string>();
  const keys = [...probes.keys()];
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(CHECK_CONCURRENCY, keys.length) }, async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      if (!(await probes.get(key)!())) failed.add(key);
    }
  }));
  const unreachable = sources.filter((source) => failed.has(source.probe)).map(({ probe: _, ...source }) => source).sort((a, b) => a.source_id - b.source_id);
  const remote = sources.filter((source) => source.probe.startsWith('storage location ')).length;
  return {
    status: unreachable.length === 0 ? 'ready' : 'not_ready',
    checked_at: now().toISOString(),
    sources: { local: sources.length - remote, remote, unreachable: unreachable.length },
    unreachable: unreachable.slice(0, READINESS_LISTED),
  };
}

/** The readiness of the build being served, checked at most every `RECHECK_MS`, one check at a time. */
export interface ReadinessMonitor {
  /** The last answer, or a first check's when there is none for this build. Starts a new check when it is old. */
  current: () => Promise<Readiness>;
  /** A check that starts now (or the one running, if it started for this build), and its answer. */
  check: () => Promise<Readiness>;
}

/**
 * Watches the sources of the build `catalog()` gives. Each unreachable source is reported to `warn` once per
 * process (on the first check that finds it), not on every probe.
 */
export function createReadinessMonitor(catalog: () => { index: CatalogIndex; buildId: string }, dataDir: string, warn: (message: string) => void): ReadinessMonitor {
  let last: { buildId: string; at: number; answer: Readiness } | undefined;
  let running: { buildId: string; promise: Promise<Readiness> } | undefined;
  const warned = new Set<number>();
  const start = (buildId: string, index: CatalogIndex) => {
    const promise = checkSources(catalogSources(index, dataDir)).then((answer) => {
      last = { buildId, at: Date.now(), answer };
      reportNew(answer);
      return answer;
    }).finally(() => {
      if (running?.promise === promise) running = undefined;
    });
    running = { buildId, promise };
    return promise;
  };
  const reportNew = (answer: Readiness) => {
    const fresh = answer.unreachable.filter((source) => !warned.has(source.source_id));
    if (fresh.length === 0) return;
    for (const source of fresh) warned.add(source.source_id);
    const more = answer.sources.unreachable - answer.unreachable.length;
    warn(`not ready: ${answer.sources.unreachable} of ${answer.sources.local + answer.sources.remote} sources (${answer.sources.local} in GEOSHELF_DATA_DIR, ${dataDir}; ${answer.sources.remote} in object storage) cannot be read; queries and downloads of them answer 503 until they are back:\n${fresh.map((source) => `  source ${source.source_id} (dataset ${source.dataset_id}): ${source.url}`).join('\n')}${more > 0 ? `\n  and ${more} more` : ''}`);
  };
  return {
    current: () => {
      const { index, buildId } = catalog();
      if (running?.buildId === buildId && (!last || last.buildId !== buildId)) return running.promise;
      if (!last || last.buildId !== buildId) return start(buildId, index);
      if (!running && Date.now() - last.at >= RECHECK_MS) void start(buildId, index).catch(() => undefined);
      return Promise.resolve(last.answer);
    },
    check: () => {
      const { index, buildId } = catalog();
      return running?.buildId === buildId ? running.promise : start(buildId, index);
    },
  };
}
