import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadCatalogModel } from '../generator/build.ts';
import { DataCache } from '../generator/enrich/data-cache.ts';
import { DATA_FACTS_VERSION, inspectGeoParquet, type DataFacts } from '../generator/enrich/inspect-data-file.ts';
import { scanWkbColumn } from '../runtime/geometry-scan.ts';
import { benchConfig, median } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

/**
 * Enrichment of a synthetic GeoParquet file of 1,000,000 points with 10 attribute columns, cold (DuckDB reads
 * it) and cached (the content hash finds the facts), beside a plain DuckDB scan of every column as baseline;
 * enrichment of the whole sample catalog, cold and cached; and what GEOS's validity check costs on the
 * sample's polygon files.
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

  await benchValidity(bench);
}

/** The sample's polygon files, smallest to largest. */
const POLYGON_FILES = [
  'natural-earth/land/2.0.2/land-110m.parquet',
  'natural-earth/countries/2.0.2/countries-110m.parquet',
  'natural-earth/land/2.0.2/land-50m.parquet',
  'natural-earth/countries/2.0.2/countries-50m.parquet',
  'us-census/us-boundaries/3.0.1/counties.parquet',
  'natural-earth/land/2.0.2/land-10m.parquet',
  'natural-earth/countries/2.0.2/countries-10m.parquet',
];

/**
 * GEOS's cost: loading it in a fresh process, and on each polygon file the geometry scan with validity against
 * the same scan without it (types and extent only), median of 3 each.
 */
async function benchValidity(bench: BenchContext): Promise<void> {
  const load = execFileSync(process.execPath, ['--input-type=module', '-e', `
    const started = performance.now();
    const { loadGeometryValidator } = await import(${JSON.stringify(join(bench.repo, 'runtime/geometry-validity.ts'))});
    await loadGeometryValidator();
    console.log(performance.now() - started);
  `], { encoding: 'utf8' });
  bench.report('GEOS (geos-wasm): load in a fresh process', `${Number(load).toFixed(0)} ms`, 'import and compile the WebAssembly, once per build; a file of points never loads it');
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await instance.connect();
  try {
    await connection.run('SET GLOBAL enable_geoparquet_conversion = false');
    for (const relative of POLYGON_FILES) {
      const path = join(bench.repo, 'catalog-data', 'data', relative);
      const relation = `read_parquet('${path.replaceAll("'", "''")}')`;
      const type = String((await connection.runAndReadAll(`SELECT column_type FROM (DESCRIBE SELECT geometry FROM ${relation})`)).getRows()[0]?.[0]);
      const expression = type.toUpperCase() === 'GEOMETRY' ? 'st_asbinary(geometry)' : 'geometry';
      const vertices = Number((await connection.runAndReadAll(`SELECT sum((octet_length(${expression}) - 9) // 16) FROM ${relation}`)).getRows()[0]?.[0]);
      const timed = async (validity: boolean) => {
        const times: number[] = [];
        let invalid = 0;
        for (let round = 0; round < 3; round++) {
          const started = performance.now();
          invalid = (await scanWkbColumn(connection, relation, expression, { validity })).invalid;
          times.push(performance.now() - started);
        }
        return { ms: median(times), invalid };
      };
      const without = await timed(false);
      const withGeos = await timed(true);
      const geosMs = Math.max(withGeos.ms - without.ms, 0);
      bench.report(
        `validity of ${relative.split('/').pop()}`,
        `+${geosMs.toFixed(0)} ms`,
        `scan ${without.ms.toFixed(0)} → ${withGeos.ms.toFixed(0)} ms; about ${(vertices / 1000).toFixed(0)}k vertices, ${(vertices / Math.max(geosMs, 1) / 1000).toFixed(1)} M vertices/s; ${withGeos.invalid} invalid`,
      );
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
