/**
 * One PMTiles twin in a process of its own, as a build's twin thread makes it (one DuckDB thread, the twin
 * instance's memory limit), for `npm run bench -- twin-scale`: prints what was made, the time, the processor
 * time and the process's peak RSS as one JSON line, and each zoom made on stderr.
 * @example node bench/twin-child.ts points.parquet points.pmtiles
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { writePmTilesTwin } from '../generator/tiles/pmtiles-twin.ts';
import { twinInstanceOptions } from '../generator/tiles/twin-stage.ts';

const [source, target] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:', twinInstanceOptions());
const started = performance.now();
// Each zoom made, on stderr, for a run of an hour or more to be followed.
const progress = (done: number, total: number) => console.error(`${new Date().toISOString()} zoom ${done - 1} of ${total - 1} made, ${Math.round((performance.now() - started) / 1000)} s`);
const facts = await writePmTilesTwin({ instance, source: source!, target: target!, stamp: 'bench', name: 'points', progress });
const usage = process.resourceUsage();
instance.closeSync();
console.log(JSON.stringify({
  ms: Math.round(performance.now() - started),
  cpuMs: Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000),
  peakRssBytes: usage.maxRSS * 1024,
  maxZoom: facts.maxZoom,
  tiles: facts.tiles,
  bytes: facts.bytes,
}));
