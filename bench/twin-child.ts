/**
 * One PMTiles twin in a process of its own, as a build's twin thread makes it (one DuckDB thread, the twin
 * instance's memory limit), for `npm run bench -- twin-scale`: prints what was made, the time, the processor
 * time and the process's peak RSS as one JSON line, and how far it is on stderr.
 * @example node bench/twin-child.ts points.parquet points.pmtiles
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { writePmTilesTwin } from '../generator/tiles/pmtiles-twin.ts';
import { twinInstanceOptions } from '../generator/tiles/twin-stage.ts';

const [source, target] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:', twinInstanceOptions());
const started = performance.now();
// How far the twin is, on stderr at each step and hundredth, for a run of an hour to be followed.
let said = '';
const progress = (fraction: number, step: string) => {
  const line = `${step}, ${Math.floor(fraction * 100)}%`;
  if (line !== said) console.error(`${new Date().toISOString()} ${line}, ${Math.round((performance.now() - started) / 1000)} s`);
  said = line;
};
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
