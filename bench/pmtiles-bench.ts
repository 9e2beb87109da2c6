import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Browser } from 'playwright-core';
import { writePmTilesTwin } from '../generator/tiles/pmtiles-twin.ts';
import { startChromium } from '../tests/helpers/chromium.ts';
import { median } from './build-bench.ts';
import { buildPreviewSite, servePreviewSite, type PreviewServer } from './preview-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

const ROUNDS = 5;
/** The performance mark src/client/entries/file-page.ts sets once the map has drawn the archive. */
const ARCHIVE_MARK = 'geoshelf:archive-drawn';

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
    await benchArchiveMap(bench, instance, source, join(bench.root, 'pmtiles-points-1m.pmtiles'));
  } finally {
    instance.closeSync();
  }
}

/**
 * The file page's map of the whole 1M-point file from its twin, on a plain static server: navigation to the map
 * drawn (the page's performance mark, set once the tiles in view are on screen), cold, in headless Chromium over
 * loopback. The baseline, in the same run, is the same page over the twin of a 1,000-point file: the page, the
 * scripts and the map with almost nothing to draw.
 */
async function benchArchiveMap(bench: BenchContext, instance: DuckDBInstance, source: string, archive: string): Promise<void> {
  const site = join(bench.root, 'pmtiles-site');
  await mkdir(join(site, 'data'), { recursive: true });
  await rename(archive, join(site, 'data', 'points-1m.pmtiles'));
  await rename(source, join(site, 'data', 'points-1m.parquet'));
  await writeSyntheticPoints(join(site, 'data', 'points-1k.parquet'), 1_000);
  await writePmTilesTwin({ instance, source: join(site, 'data', 'points-1k.parquet'), target: join(site, 'data', 'points-1k.pmtiles'), stamp: 'bench', name: 'points' });
  const page = (name: string, rows: number) => ({ path: name, dataUrl: `/data/points-${name}.parquet`, tilesUrl: `/data/points-${name}.pmtiles`, geometryColumn: 'geometry', rowCount: rows, bounds: [-180, -85, 180, 85] as [number, number, number, number] });
  await buildPreviewSite(bench.repo, site, [page('1m', 1_000_000), page('1k', 1_000)]);
  const server = await servePreviewSite(site);
  const browser = await startChromium();
  try {
    // The first page a fresh Chromium opens pays for starting its renderer and GPU processes.
    await timeArchive(browser, server, `${server.origin}/1k/`);
    const large: number[] = [];
    const small: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      large.push(await timeArchive(browser, server, `${server.origin}/1m/`));
      small.push(await timeArchive(browser, server, `${server.origin}/1k/`));
    }
    const tiles = server.requests.filter((request) => request.path.endsWith('points-1m.pmtiles'));
    const bytes = tiles.reduce((sum, request) => sum + request.bytes, 0) / (ROUNDS);
    bench.report('map of the 1M-point twin: navigation → first screen drawn', `${median(large).toFixed(0)} ms`, `median of ${ROUNDS} cold page loads (slowest ${Math.max(...large).toFixed(0)} ms), plain static server, headless Chromium over loopback; target ≤ 1 s ${median(large) <= 1000 ? 'met' : 'missed'}; ${(bytes / 1e6).toFixed(2)} MB of the archive read per load, by ${tiles.length / ROUNDS} range requests`);
    bench.report('map of a 1,000-point twin: navigation → first screen drawn', `${median(small).toFixed(0)} ms`, `baseline: the same page with almost nothing to draw; the 1M-point map costs ${(median(large) / median(small)).toFixed(2)}× it`);
  } finally {
    await browser.close();
    await server.close();
  }
}

/** Opens `url` in a fresh browser context (an empty cache); resolves with the milliseconds to the archive drawn. */
async function timeArchive(browser: Browser, server: PreviewServer, url: string): Promise<number> {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(url);
    await page.waitForSelector('.preview-map[data-archive]', { timeout: 60_000 });
    const state = await page.locator('.preview-map').getAttribute('data-archive');
    if (state !== 'drawn') throw new Error(`the map did not draw the archive of ${url}`);
    return await page.evaluate((mark) => performance.getEntriesByName(mark)[0]?.startTime ?? NaN, ARCHIVE_MARK);
  } finally {
    await context.close();
  }
}
