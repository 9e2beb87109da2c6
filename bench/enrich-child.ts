/**
 * One enrichment of a GeoParquet file in a process of its own, as the build reads a data file for its facts (the
 * build's inspection instance), for `npm run bench -- enrich-scale`; or, with `scan`, the baseline: plain DuckDB
 * counting every column of the same file in an instance of the same options. Prints the time, the process's
 * peak RSS and the bytes read from files during the run (`rchar` of /proc/self/io, which counts reads served
 * from the page cache too) as one JSON line.
 * @example node bench/enrich-child.ts enrich points.parquet
 */
import { readFileSync } from 'node:fs';
import { inspectGeoParquet, openInspectionInstance } from '../generator/enrich/inspect-data-file.ts';
import { quoteIdentifier, quoteLiteral } from '../core/sql.ts';

const [mode, path] = process.argv.slice(2) as ['enrich' | 'scan', string];
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);

const instance = await openInspectionInstance();
const readBefore = bytesRead();
const started = performance.now();
let columns: number;
if (mode === 'enrich') {
  const facts = await inspectGeoParquet(instance, path);
  if (facts.geometry === null) throw new Error('the file has no geometry column the enrichment found');
  columns = facts.columns.length;
} else {
  const connection = await instance.connect();
  const names = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(path)})`)).getRows().map((row) => String(row[0]));
  await connection.runAndReadAll(`SELECT count(*), ${names.map((name) => `count(${quoteIdentifier(name)})`).join(', ')} FROM read_parquet(${quoteLiteral(path)})`);
  connection.closeSync();
  columns = names.length;
}
const ms = performance.now() - started;
const read = bytesRead() - readBefore;
const usage = process.resourceUsage();
instance.closeSync();
console.log(JSON.stringify({
  ms: Math.round(ms),
  peakRssBytes: usage.maxRSS * 1024,
  bytesRead: read,
  columns,
}));
