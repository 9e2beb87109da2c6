/**
 * The build's PMTiles twins: for every twin source the model derived (generator/model/build-model.ts
 * `addTwins`), the archive beside its GeoParquet file is made, unless it already carries the stamp of the same
 * data and tiler. A twin is made again only when its GeoParquet file's bytes or the tiler change, so an
 * unchanged catalog rebuilds without reading any data for them.
 *
 * A twin's one layer is named after its file (`x.parquet` → layer `x`), not after what a catalog calls the file:
 * the archive is then the same whichever catalog makes it, so catalogs that share a data folder (a bench's
 * synthetic catalog over the sample's files) or a CI cache of twins never hand one catalog another's layer name.
 */
import { access, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { CatalogModel, FileModel } from '../../core/model.ts';
import type { BuildIssue } from '../errors.ts';
import type { LocalDataFile } from '../model/build-model.ts';
import { createProgress, type ProgressReporter } from '../enrich/progress.ts';
import { readTwinMark, twinStamp } from './pmtiles-twin.ts';
import { createTwinPool, type TwinJob, type TwinOutcome } from './twin-pool.ts';

/** Twins looked at (their file hashed, their archive's stamp read) at once. */
const CHECK_CONCURRENCY = 8;

/** What the twin stage needs. */
export interface TwinStageOptions {
  dataDir: string;
  /** SHA-256 of a file's bytes (the data cache's, so a file is hashed once per build). */
  hashOf: (path: string) => Promise<string>;
  /** Threads that make twins side by side (generator/tiles/twin-pool.ts); by default the cores, up to 4. */
  threads?: number;
  log: (line: string) => void;
  progress?: ProgressReporter;
}

/** What the twin stage did. */
export interface TwinStageResult {
  issues: BuildIssue[];
  warnings: string[];
  /** Archives written in this build. */
  made: number;
  /** Archives already there with the stamp of their data and tiler (kept from an earlier build or a CI cache). */
  current: number;
  /** The local files left for enrichment: those of twins that could not be made are taken out. */
  localFiles: LocalDataFile[];
}

/**
 * Makes every stale twin. A GeoParquet file that cannot give one (not longitude/latitude, no geometry,
 * unreadable) loses its twin source with a warning: the GeoParquet source itself is still checked by the
 * enrichment stage, which reports an unreadable file. A file at a twin's path that geoshelf did not write is
 * never overwritten: the build fails with `TwinPathTaken`.
 */
export async function makeTwins(model: CatalogModel, localFiles: LocalDataFile[], options: TwinStageOptions): Promise<TwinStageResult> {
  const twins = localFiles.filter((local) => local.twinOf !== undefined);
  const result: TwinStageResult = { issues: [], warnings: [], made: 0, current: 0, localFiles };
  if (twins.length === 0) return result;
  const advance = createProgress('making PMTiles twins', twins.length, options.progress);
  // Several sources may share one GeoParquet file (a synthetic catalog): its twin is looked at, and made or
  // refused, once. First every twin is checked; then the stale ones are made, the largest file first, so that
  // the pool's threads end together rather than one waiting on the largest at the end.
  const sharing = new Map<string, number>();
  const unique: LocalDataFile[] = [];
  for (const twin of twins) {
    if (!sharing.has(twin.path)) unique.push(twin);
    sharing.set(twin.path, (sharing.get(twin.path) ?? 0) + 1);
  }
  // Hashing reads each file whole: a few at a time, not every file of a large catalog at once.
  const checked = new Map<string, TwinCheck>();
  let nextCheck = 0;
  await Promise.all(Array.from({ length: Math.min(CHECK_CONCURRENCY, unique.length) }, async () => {
    while (nextCheck < unique.length) {
      const twin = unique[nextCheck++]!;
      checked.set(twin.path, await checkTwin(twin, options, result));
    }
  }));
  const stale = [...checked].flatMap(([path, check]) => (typeof check === 'object' && check !== null ? [{ path, ...check }] : []))
    .sort((a, b) => b.size - a.size || (a.path < b.path ? -1 : 1));
  const reasons = new Map<string, string | null>([...checked].flatMap(([path, check]) => (typeof check === 'object' && check !== null ? [] : [[path, check] as const])));
  const pool = createTwinPool(options.threads === undefined ? {} : { threads: options.threads });
  let done = [...reasons.keys()].reduce((sum, path) => sum + sharing.get(path)!, 0);
  advance(done);
  // Twins being made count by the share of their zooms made, so a large file's twin shows it moving.
  const making = new Map<string, number>();
  const partly = () => [...making].reduce((sum, [path, fraction]) => sum + fraction * sharing.get(path)!, 0);
  try {
    await Promise.all(stale.map(async ({ path, twinOf, job, size }) => {
      const outcome = await pool.make(job, size, (fraction) => {
        // The last zoom is counted when the twin's answer comes, so the line ends once.
        if (fraction >= 1) return;
        making.set(path, fraction);
        advance(done + partly());
      });
      making.delete(path);
      reasons.set(path, readOutcome(outcome, job.source, twinOf, result));
      done += sharing.get(path)!;
      advance(done + partly());
    }));
  } finally {
    await pool.close();
  }
  const failed = new Set(twins.filter((twin) => reasons.get(twin.path) !== null).map((twin) => twin.sourceId));
  // Twins finish in any order; what is said of them is not.
  result.warnings.sort();
  result.issues.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  if (failed.size > 0) {
    removeSources(model, failed);
    result.localFiles = localFiles.filter((local) => !failed.has(local.sourceId));
  }
  if (result.made > 0) options.log(`made ${result.made} PMTiles twin${result.made === 1 ? '' : 's'} (${result.current} current)`);
  return result;
}

/** A twin that is current (null), cannot be made (why), or must be made: its job, and its file's size. */
type TwinCheck = string | null | { job: TwinJob; size: number; twinOf: string };

/**
 * Looks at a twin: current when it carries its data's stamp and its file's name; refused when its path holds a
 * file geoshelf did not make.
 */
async function checkTwin(twin: LocalDataFile, options: TwinStageOptions, result: TwinStageResult): Promise<TwinCheck> {
  const source = join(options.dataDir, twin.twinOf!);
  const target = join(options.dataDir, twin.path);
  const name = basename(twin.path, '.pmtiles');
  const stamp = twinStamp(await options.hashOf(source));
  const current = await readTwinMark(target);
  if (current?.stamp === stamp && current.layer === name) {
    result.current++;
    return null;
  }
  if (current === null && (await exists(target))) {
    const line = twin.line();
    result.issues.push({
      code: 'TwinPathTaken', source: twin.source, ...(line ? { line } : {}), path: twin.field,
      message: `"${twin.path}" is where the build puts the PMTiles twin of "${twin.twinOf}", but it holds a file geoshelf did not make`,
    });
    return 'taken';
  }
  return { job: { source, target, stamp, name }, size: (await stat(source)).size, twinOf: twin.twinOf! };
}

/** What a made twin's outcome says: null when it was written, else why not (and a warning, but for a file without geometry). */
function readOutcome(outcome: TwinOutcome, source: string, twinOf: string, result: TwinStageResult): string | null {
  if (outcome.ok) {
    result.made++;
    return null;
  }
  const reason = outcome.message.split('\n')[0]!.replaceAll(source, twinOf);
  // A file without geometry gets its own warning from the inspection, which names the way out.
  if (!outcome.noGeometry) result.warnings.push(`${twinOf}: no PMTiles twin, as ${reason}`);
  return reason;
}

/** Takes sources out of the model, and a format link left with none. */
export function removeSources(model: CatalogModel, ids: Set<number>): void {
  forEachFile(model, (file) => {
    const emptied = new Set<number>();
    for (const link of file.formats) {
      const kept = link.sources.filter((source) => !ids.has(source.id));
      if (kept.length === 0 && link.sources.length > 0) emptied.add(link.id);
      link.sources = kept;
    }
    file.formats = file.formats.filter((link) => !emptied.has(link.id));
  });
}

function forEachFile(model: CatalogModel, visit: (file: FileModel) => void): void {
  for (const collection of model.collections) for (const dataset of collection.datasets) for (const file of dataset.files) visit(file);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}
