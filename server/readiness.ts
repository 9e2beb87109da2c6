import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { CatalogIndex } from '../core/catalog-index.ts';
import type { Readiness, UnreachableSource } from '../schemas/discovery.ts';

/**
 * Readiness (`GET /api/health/ready`): whether this replica can read every source the catalog stores in its data
 * folder, the files its queries, downloads and OGC items read. `/api/health` stays a liveness check. A replica
 * started with an empty or wrong data folder is alive but not ready: a proxy takes it out rather than send it
 * queries it can only answer with 503. Sources stored elsewhere (another storage location, a remote URL) are
 * not this replica's to read, so they do not count.
 */

/** How long an answer stands before a probe starts a new check; probes in between get the last one. */
const RECHECK_MS = 5_000;
/** Files looked at concurrently: a check of 300,000 files stays a background trickle, not a burst of descriptors. */
const CHECK_CONCURRENCY = 16;
/** Unreachable sources named in an answer; the count says how many there are in all. */
export const READINESS_LISTED = 100;

/** A source of the catalog this replica reads from its data folder. */
interface LocalSource extends UnreachableSource {
  path: string;
}

/** Every source of the catalog stored under `storage_base_url`, that is, in the data folder. */
export function localSources(index: CatalogIndex, dataDir: string): LocalSource[] {
  const prefix = `${index.settings.storageBaseUrl}/`;
  const sources: LocalSource[] = [];
  for (const { dataset } of index.datasetsById.values()) {
    for (const file of dataset.files) {
      for (const link of file.formats) {
        for (const source of link.sources) {
          if (source.location.type !== 'file' || !source.url?.startsWith(prefix)) continue;
          sources.push({ dataset_id: dataset.id, file_id: file.id, source_id: source.id, url: source.url, path: join(dataDir, source.location.path) });
        }
      }
    }
  }
  return sources;
}

/** Looks at every local source (a file, or a folder such as a `.gdb`) and answers which cannot be read. */
export async function checkSources(sources: LocalSource[], now = () => new Date()): Promise<Readiness> {
  const unreachable: UnreachableSource[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(CHECK_CONCURRENCY, sources.length) }, async () => {
    while (next < sources.length) {
      const { path, ...source } = sources[next++]!;
      await access(path, constants.R_OK).catch(() => unreachable.push(source));
    }
  }));
  unreachable.sort((a, b) => a.source_id - b.source_id);
  return {
    status: unreachable.length === 0 ? 'ready' : 'not_ready',
    checked_at: now().toISOString(),
    sources: { local: sources.length, unreachable: unreachable.length },
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
    const promise = checkSources(localSources(index, dataDir)).then((answer) => {
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
    warn(`not ready: ${answer.sources.unreachable} of ${answer.sources.local} sources the catalog stores in GEOSHELF_DATA_DIR (${dataDir}) cannot be read; queries and downloads of them answer 503 until they are restored:\n${fresh.map((source) => `  source ${source.source_id} (dataset ${source.dataset_id}): ${source.url}`).join('\n')}${more > 0 ? `\n  and ${more} more` : ''}`);
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
