import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../runtime/config.ts';
import { benchArrow } from './arrow-bench.ts';
import { benchBuilds } from './build-bench.ts';
import { benchCiRebuild } from './ci-bench.ts';
import { benchLoadWhileBuilding } from './build-load-bench.ts';
import { benchCompression } from './compression-bench.ts';
import { benchDiscovery } from './discovery-bench.ts';
import { benchEnrichment } from './enrich-bench.ts';
import { benchEnrichScale } from './enrich-scale-bench.ts';
import { benchWriteThreads } from './write-threads-bench.ts';
import { benchStacFreeText } from './stac-q-bench.ts';
import { benchLighthouse } from './lighthouse-bench.ts';
import { benchListings } from './listing-bench.ts';
import { benchPmTiles } from './pmtiles-bench.ts';
import { benchDownloadZip } from './zip-bench.ts';
import { benchQueries } from './query-bench.ts';
import { benchFeatures } from './features-bench.ts';
import { benchFleet } from './fleet-bench.ts';
import { benchMcp } from './mcp-bench.ts';
import { benchQueryLoad } from './query-load-bench.ts';
import { benchPreview } from './preview-bench.ts';
import { benchPublish } from './publish-bench.ts';
import { benchRemoteSources } from './remote-bench.ts';
import { benchConvert } from './convert-bench.ts';
import { benchSearch } from './search-bench.ts';
import { benchSite } from './site-bench.ts';
import { benchStacBuild } from './stac-build-bench.ts';
import { benchStacSearch } from './stac-search-bench.ts';
import { benchStaticReads } from './static-bench.ts';
import { benchStalls } from './stall-bench.ts';
import { benchTwinPool } from './twin-pool-bench.ts';
import { benchTwinScale } from './twin-scale-bench.ts';
import { benchServerScale } from './server-scale-bench.ts';
import { benchPagesScale } from './pages-scale-bench.ts';
import { benchWktHilbert } from './wkt-hilbert-bench.ts';

/** Shared state of one bench run: its scratch folder and the figures printed so far. */
export interface BenchContext {
  root: string;
  repo: string;
  section: (title: string) => void;
  report: (name: string, value: string, note: string) => void;
  keep: (name: string, config: Config) => void;
  kept: (name: string) => Config;
  /** Whether this run includes a section (every section when none is named). */
  wants: (section: string) => boolean;
}

const SECTIONS: Record<string, (bench: BenchContext) => Promise<void>> = {
  builds: benchBuilds,
  static: benchStaticReads,
  listings: benchListings,
  compression: benchCompression,
  enrichment: benchEnrichment,
  queries: benchQueries,
  load: benchQueryLoad,
  'build-load': benchLoadWhileBuilding,
  site: benchSite,
  preview: benchPreview,
  search: benchSearch,
  'stac-build': benchStacBuild,
  'stac-search': benchStacSearch,
  features: benchFeatures,
  mcp: benchMcp,
  arrow: benchArrow,
  fleet: benchFleet,
  pmtiles: benchPmTiles,
  zip: benchDownloadZip,
  stall: benchStalls,
  lighthouse: benchLighthouse,
  publish: benchPublish,
  ci: benchCiRebuild,
  remote: benchRemoteSources,
  convert: benchConvert,
  wkt: benchWktHilbert,
  twins: benchTwinPool,
  'twin-scale': benchTwinScale,
  'enrich-scale': benchEnrichScale,
  writers: benchWriteThreads,
  'stac-q-scale': benchStacFreeText,
  'server-scale': benchServerScale,
  'pages-scale': benchPagesScale,
  discovery: benchDiscovery,
};

/** Sections that read no tree of the build section: run alone, they do not pay for it. */
const STANDALONE = new Set(['ci', 'remote', 'convert', 'wkt', 'twins', 'twin-scale', 'enrich-scale', 'writers', 'stac-q-scale', 'server-scale', 'pages-scale', 'discovery']);

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const root = await mkdtemp(join(tmpdir(), 'geoshelf-bench-'));
  const kept = new Map<string, Config>();
  const bench: BenchContext = {
    root,
    repo: new URL('..', import.meta.url).pathname.replace(/\/$/, ''),
    section: (title) => console.log(`\n## ${title}\n\n| figure | value | notes |\n|---|---|---|`),
    report: (name, value, note) => console.log(`| ${name} | ${value} | ${note} |`),
    keep: (name, config) => kept.set(name, config),
    kept: (name) => {
      const config = kept.get(name);
      if (!config) throw new Error(`the ${name} section must run first`);
      return config;
    },
    wants: (section) => wanted.length === 0 || wanted.includes(section),
  };
  console.log(`# npm run bench — ${new Date().toISOString().slice(0, 16)}Z, Node ${process.version}, ${availableParallelism()} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB`);
  try {
    for (const [name, run] of Object.entries(SECTIONS)) {
      // The other sections read the trees the build section makes, so it runs unless only standalone ones are named.
      const needsBuilds = wanted.length === 0 || wanted.some((section) => !STANDALONE.has(section));
      if ((name === 'builds' && needsBuilds) || bench.wants(name)) await run(bench);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
