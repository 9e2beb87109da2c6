import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadCatalogModel } from '../generator/build.ts';
import { DataCache } from '../generator/enrich/data-cache.ts';
import { DATA_FACTS_VERSION, inspectGeoParquet, type DataFacts } from '../generator/enrich/inspect-data-file.ts';
import { benchConfig, median } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

/**
 * Enrichment of a synthetic GeoParquet file of 1,000,000 points with 10 attribute columns, cold (DuckDB reads
 * it) and cached (the content hash finds the facts), beside a plain DuckDB scan of every column as baseline;
 * and enrichment of the whole sample catalog, cold and cached.
 */
export async function benchEnrichment(bench: BenchContext): Promise<void> {
  bench.section('Data dictionary: enrichment');
  const path = join(bench.root, 'points-1m.parquet');
  await writeSyntheticPoints(path, 1_000_000);
  const cold: number[] = [];
  let facts: DataFacts | undefined;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
    facts = await inspectGeoParquet(instance, path);
    instance.closeSync();
    cold.push(performance.now() - started);
  }
  const scan: number[] = [];
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
    const connection = await instance.connect();
    await connection.runAndReadAll(`SELECT count(*), ${facts!.columns.map((column) => `count("${column.name}")`).join(', ')} FROM read_parquet('${path}')`);
    connection.closeSync();
    instance.closeSync();
    scan.push(performance.now() - started);
  }
  const cacheDir = join(bench.root, 'enrich-cache');
  const writer = await DataCache.open<DataFacts>(cacheDir, 'data-facts.json', DATA_FACTS_VERSION);
  writer.set(`geoparquet:${await writer.contentHash(path)}`, facts!);
  await writer.save(new Set([`geoparquet:${await writer.contentHash(path)}`]), new Set([path]));
  const cached: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    const cache = await DataCache.open<DataFacts>(cacheDir, 'data-facts.json', DATA_FACTS_VERSION);
    if (!cache.get(`geoparquet:${await cache.contentHash(path)}`)) throw new Error('the cache missed');
    cached.push(performance.now() - started);
  }
  bench.report('1M points × 10 attributes: cold', `${(median(cold) / 1000).toFixed(2)} s`, `median of 3; all statistics plus every geometry checked; target ≤ 3 s`);
  bench.report('1M points: cold / plain DuckDB count of every column', `${(median(cold) / median(scan)).toFixed(1)}×`, `plain scan ${median(scan).toFixed(0)} ms`);
  bench.report('1M points: cached', `${median(cached).toFixed(1)} ms`, 'median of 5: open the cache, find the content hash, read the facts; target ≤ 50 ms');

  const sampleRoot = join(bench.root, 'enrich-sample');
  const sample = benchConfig(sampleRoot, join(bench.repo, 'catalog-data'), join(bench.repo, 'catalog-data', 'data'));
  const started = performance.now();
  const first = await loadCatalogModel({ config: sample });
  const coldMs = performance.now() - started;
  const again = performance.now();
  await loadCatalogModel({ config: sample });
  const warmMs = performance.now() - again;
  bench.report('sample catalog: load and enrich, cold', `${(coldMs / 1000).toFixed(2)} s`, `${first.dataFilesRead} data files read`);
  bench.report('sample catalog: load and enrich, cached', `${warmMs.toFixed(0)} ms`, '0 data files read');
}
