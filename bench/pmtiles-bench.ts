import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { writePmTilesTwin } from '../generator/tiles/pmtiles-twin.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

/**
 * Issue 14's targets for whole-file tiles: the PMTiles twin of the 1,000,000-point bench file, zoom 0 to its
 * chosen highest zoom, in at most 60 s on this machine, no tile over 500 KB. The baseline, in the same run, is
 * one read of every row (geometry and columns) by DuckDB, which the twin needs anyway.
 */
export async function benchPmTiles(bench: BenchContext): Promise<void> {
  bench.section('PMTiles twin of 1,000,000 points (one run)');
  const source = join(bench.root, 'pmtiles-points-1m.parquet');
  await writeSyntheticPoints(source, 1_000_000);
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  try {
    const connection = await instance.connect();
    const started = performance.now();
    await connection.runAndReadAll(`SELECT st_asbinary(geometry), * EXCLUDE (geometry) FROM read_parquet('${source}')`);
    const readMs = performance.now() - started;
    connection.closeSync();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const facts = await writePmTilesTwin({ instance, source, target: join(bench.root, 'pmtiles-points-1m.pmtiles'), stamp: 'bench', name: 'points' });
    clearInterval(sampler);
    const dropped = Object.entries(facts.dropped).map(([z, count]) => `z${z}: ${count.toLocaleString('en-US')}`).join(', ');
    bench.report('twin of 1M points, z0 to its highest zoom', `${(facts.ms / 1000).toFixed(1)} s`, `target ≤ 60 s ${facts.ms <= 60_000 ? 'met' : 'missed'}; ${(facts.ms / readMs).toFixed(1)}× one DuckDB read of every row (${(readMs / 1000).toFixed(1)} s)`);
    bench.report('zooms chosen', `0–${facts.maxZoom}`, `${facts.tiles.toLocaleString('en-US')} tiles`);
    bench.report('largest tile (uncompressed MVT)', `${(facts.largestTileBytes / 1000).toFixed(1)} KB`, `target ≤ 500 KB ${facts.largestTileBytes <= 500_000 ? 'met' : 'missed'}`);
    bench.report('archive', `${(facts.bytes / 1e6).toFixed(1)} MB`, `features left out of tiles by zoom: ${dropped || 'none'}`);
    bench.report('memory while tiling', `${((peak - rssBefore) / 1e6).toFixed(0)} MB`, 'RSS growth of the process (every feature is held in memory)');
  } finally {
    instance.closeSync();
  }
}
