import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCatalog } from '../generator/build.ts';
import { benchConfig } from './build-bench.ts';
import type { BenchContext } from './run.ts';

const PORT = 39_881;
const SOURCE_BYTES = 100 * 1024 * 1024;

/** Resident memory of a process, in bytes, and its peak so far (Linux /proc). */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/**
 * Reads a whole response, `chunkDelayMs` after each chunk (a slow client) or at once, sampling the server's RSS
 * every 20 ms: the answer's bytes, seconds, and the server's highest RSS meanwhile.
 */
async function download(url: string, pid: number, chunkDelayMs: number, headers: Record<string, string> = {}): Promise<{ bytes: number; seconds: number; highest: number; status: number }> {
  let highest = (await memoryOf(pid)).rss;
  const sampler = setInterval(() => void memoryOf(pid).then(({ rss }) => (highest = Math.max(highest, rss)), () => undefined), 20);
  const started = performance.now();
  const response = await fetch(url, { headers });
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    if (chunkDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, chunkDelayMs));
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  highest = Math.max(highest, (await memoryOf(pid)).rss);
  return { bytes, seconds, highest, status: response.status };
}

/**
 * Issue 14's target: `download-zip` of a 100 MB source streams with flat memory, the server's RSS growing by
 * less than 20 MB. The server runs as its own process (`bench/serve.ts`) so its RSS is its own; the source is
 * 100 MiB of random bytes (nothing compresses, and a stored ZIP entry is as large as the file) catalogued as a
 * GeoPackage, which the build does not read. Baseline in the same run: the same file from `/data`.
 */
export async function benchDownloadZip(bench: BenchContext): Promise<void> {
  bench.section('download-zip of a 100 MiB source: the server\'s memory while it streams');
  const dataDir = join(bench.root, 'zip-data');
  await mkdir(dataDir, { recursive: true });
  await writeFile(join(dataDir, 'big.gpkg'), randomBytes(SOURCE_BYTES));
  const catalogDir = join(bench.root, 'zip-catalog');
  await mkdir(join(catalogDir, 'collections'), { recursive: true });
  await mkdir(join(catalogDir, 'datasets'), { recursive: true });
  for (const name of ['formats.yaml', 'storage-locations.yaml']) await writeFile(join(catalogDir, name), await readFile(join(bench.repo, 'catalog-data', name), 'utf8'));
  await writeFile(join(catalogDir, 'collections/bench.yaml'), 'slug: bench\nname: Bench\n');
  await writeFile(join(catalogDir, 'datasets/big.yaml'), ['slug: big', 'collection: bench', 'name: Big', 'files:', '  - slug: big', '    name: Big', '    formats:', '      - format: geopackage', '        sources:', '          - version: 1', '            path: big.gpkg', ''].join('\n'));
  const config = benchConfig(bench.root, catalogDir, dataDir, 'zip-dist');
  await buildCatalog({ config });
  const origin = `http://127.0.0.1:${PORT}`;
  const server = spawn(join(bench.repo, 'node_modules/node/bin/node'), [join(bench.repo, 'bench/serve.ts')], {
    env: { ...process.env, PORT: String(PORT), GEOSHELF_DIST_DIR: config.distDir, GEOSHELF_DATA_DIR: dataDir, GEOSHELF_CATALOG_DIR: catalogDir, GEOSHELF_CACHE_DIR: config.cacheDir, GEOSHELF_BASE_URL: config.baseUrl },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('message', () => resolve());
      server.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    });
    const detail = await (await fetch(`${origin}/api/collections/bench/datasets/big/files/big`)).json() as { file: { formats: { sources: { links: { download_zip: string } }[] }[] } };
    const zipUrl = `${origin}${new URL(detail.file.formats[0]!.sources[0]!.links.download_zip).pathname}`;
    // One warm-up of each, so the figures are of streaming, not of the first request's code loading.
    await download(`${origin}/data/big.gpkg`, server.pid!, 0);
    await download(zipUrl, server.pid!, 0);
    const baseline = (await memoryOf(server.pid!)).rss;
    const plain = await download(`${origin}/data/big.gpkg`, server.pid!, 0);
    const fast = await download(zipUrl, server.pid!, 0);
    const slow = await download(zipUrl, server.pid!, 2);
    const tail = await download(zipUrl, server.pid!, 0, { range: `bytes=-${1024 * 1024}` });
    const growth = (result: { highest: number }) => (result.highest - baseline) / 1e6;
    const rate = (result: { bytes: number; seconds: number }) => `${(result.bytes / 1e6 / result.seconds).toFixed(0)} MB/s`;
    bench.report('server RSS before', `${(baseline / 1e6).toFixed(0)} MB`, 'after one warm-up download of each kind');
    bench.report('/data/big.gpkg (baseline)', `+${growth(plain).toFixed(1)} MB`, `${(plain.bytes / 1e6).toFixed(0)} MB at ${rate(plain)}`);
    bench.report('download-zip, fast client', `+${growth(fast).toFixed(1)} MB`, `target < 20 MB ${growth(fast) < 20 ? 'met' : 'missed'}; ${(fast.bytes / 1e6).toFixed(0)} MB at ${rate(fast)}, ${(fast.seconds / plain.seconds).toFixed(2)}× the baseline's time`);
    bench.report('download-zip, slow client (2 ms per chunk)', `+${growth(slow).toFixed(1)} MB`, `target < 20 MB ${growth(slow) < 20 ? 'met' : 'missed'}; ${rate(slow)}`);
    bench.report('download-zip, last 1 MiB (Range)', `${tail.status}`, `${tail.bytes.toLocaleString('en-US')} bytes in ${(tail.seconds * 1000).toFixed(0)} ms`);
    bench.report('server RSS peak (VmHWM)', `${((await memoryOf(server.pid!)).peak / 1e6).toFixed(0)} MB`, 'over the whole run, warm-ups included');
  } finally {
    server.kill('SIGTERM');
  }
}
