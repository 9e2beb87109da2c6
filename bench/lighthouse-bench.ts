import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import type { Result } from 'lighthouse';
import { buildCatalog } from '../generator/build.ts';
import { loadConfig } from '../runtime/config.ts';
import { createServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';
import { startChromium } from '../tests/helpers/chromium.ts';
import { findFreePort } from '../tests/helpers/web-app.ts';
import { median } from './build-bench.ts';
import type { BenchContext } from './run.ts';

/** Lighthouse runs of each page; the worst is reported, since one quiet round says little on a shared machine. */
const ROUNDS = 3;
/**
 * Runs of a round before it is given up: headless Chromium under load now and then records no screenshot, and
 * Lighthouse then has no speed index and no performance score (SPEEDINDEX_OF_ZERO); such a run is made again.
 */
const ATTEMPTS = 3;

/** The categories of Lighthouse 13's default config, in the order the table prints them. */
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo', 'agentic-browsing'] as const;

/** The page types of the web app, each at one page of the sample. */
export const LIGHTHOUSE_PAGES = [
  ['home', '/'],
  ['collection', '/collections/geonames/'],
  ['dataset', '/collections/geonames/datasets/cities/'],
  ['file (50 polygons)', '/collections/us-census/datasets/us-boundaries/files/states/'],
  ['file (135,233 points)', '/collections/geonames/datasets/cities/files/cities-1000/'],
  ['console', '/console/'],
  ['search', '/search/?q=cities'],
] as const;

/** The performance mark the file page sets once its rows are on screen (src/client/entries/file-page.ts). */
const ROWS_MARK = 'geoshelf:preview-rows';

/**
 * Chromium flags for Lighthouse: headless, no sandbox (root in a container), WebGL through SwiftShader as in the
 * browser tests. chrome-launcher adds its own defaults, among them `--disable-background-networking` and
 * `--disable-component-update`, so the browser tries no connection of its own on a machine without a network.
 */
const CHROME_FLAGS = ['--headless', '--no-sandbox', '--no-zygote', '--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist', '--font-render-hinting=none'];

/** One Lighthouse run of one page. */
export interface LighthouseRound {
  scores: Record<(typeof CATEGORIES)[number], number | null>;
  /** Total blocking time, largest contentful paint and speed index in ms, and the layout shift score. */
  tbtMs: number;
  lcpMs: number;
  speedIndexMs: number;
  cls: number;
  /** Navigation to the previewed rows on screen (observed, not simulated), on a file page. */
  rowsMs: number | null;
  /** Audits of the agentic-browsing category that scored below 1. */
  agenticFailures: string[];
  /** The 1-minute load average when the round started. */
  load: number;
}

/**
 * Lighthouse 13 (mobile preset, its default simulated throttling) over every page type of the sample, served by
 * `npm start`'s server on a free local port: each category's score, the worst of ROUNDS rounds, with total blocking
 * time and LCP of the round with the worst performance, and the machine's load beside each figure (performance is
 * timing-dependent; the other categories are not); then, apart, the time from navigation to the file pages' rows.
 */
export async function benchLighthouse(bench: BenchContext): Promise<void> {
  bench.section(`Lighthouse 13 (mobile, simulated throttling; worst of ${ROUNDS} rounds per page)`);
  const site = await serveSample(bench.root, bench.repo);
  try {
    await measurePages(site.origin, ROUNDS, (name, value, note) => bench.report(name, value, note));
    // Lighthouse stops tracing once the main thread and the network are quiet, which on a file page comes before
    // the worker has read the rows: they are timed apart, in a phone-sized window.
    for (const [name, path] of LIGHTHOUSE_PAGES.filter(([name]) => name.startsWith('file'))) {
      const times = await timeRows(`${site.origin}${path}`, ROUNDS);
      bench.report(`${name}: navigation → first 100 rows`, `${(median(times.map((time) => time.ms)) / 1000).toFixed(2)} s`, `median of ${ROUNDS} cold loads (slowest ${(Math.max(...times.map((time) => time.ms)) / 1000).toFixed(2)} s), headless Chromium, 412 × 823, no throttling; load ${times.map((time) => time.load.toFixed(1)).join(', ')}`);
    }
  } finally {
    await site.close();
  }
}

/**
 * Lighthouse over every page type of the site at `origin`, `rounds` times each, in one headless Chromium; reports
 * each page's worst scores. The first run, of the home page, is thrown away: it pays for starting the browser.
 */
export async function measurePages(origin: string, rounds: number, report: (name: string, value: string, note: string) => void): Promise<void> {
  const chrome = await chromeLauncher.launch({ chromePath: await findChromium(), chromeFlags: CHROME_FLAGS, logLevel: 'silent' });
  try {
    await runLighthouse(`${origin}/`, chrome.port);
    for (const [name, path] of LIGHTHOUSE_PAGES) {
      const runs: LighthouseRound[] = [];
      for (let round = 0; round < rounds; round++) runs.push(await runScoredRound(`${origin}${path}`, chrome.port));
      report(`${name} (${path})`, formatScores(worstScores(runs)), describeRounds(runs));
    }
  } finally {
    chrome.kill();
  }
}

/** A round with a performance score: run again (up to ATTEMPTS times) when Lighthouse could not score it. */
async function runScoredRound(url: string, port: number): Promise<LighthouseRound> {
  let round = await runLighthouse(url, port);
  for (let attempt = 1; attempt < ATTEMPTS && round.scores.performance === null; attempt++) round = await runLighthouse(url, port);
  return round;
}

/** Navigation to the file page's rows mark, in a fresh browser context each time (nothing cached). */
export async function timeRows(url: string, rounds: number): Promise<{ ms: number; load: number }[]> {
  const browser = await startChromium();
  try {
    const times: { ms: number; load: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      const load = loadavg()[0]!;
      const context = await browser.newContext({ viewport: { width: 412, height: 823 } });
      try {
        const page = await context.newPage();
        await page.goto(url);
        await page.waitForSelector('[data-preview][data-state="ready"], [data-preview][data-state="error"]', { timeout: 90_000 });
        const ms = await page.evaluate((mark) => performance.getEntriesByName(mark)[0]?.startTime ?? NaN, ROWS_MARK);
        if (!Number.isFinite(ms)) throw new Error(`the file page at ${url} showed no rows: ${await page.locator('.preview-status').textContent()}`);
        times.push({ ms, load });
      } finally {
        await context.close();
      }
    }
    return times;
  } finally {
    await browser.close();
  }
}

/** Builds the sample for a free local port (so its links point there) and serves it as `npm start` does. */
export async function serveSample(root: string, repo: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const port = await findFreePort();
  const origin = `http://127.0.0.1:${port}`;
  const config = loadConfig({}, {
    catalogDir: join(repo, 'catalog-data'),
    dataDir: join(repo, 'catalog-data', 'data'),
    distDir: join(root, 'lighthouse-dist'),
    cacheDir: join(root, 'lighthouse-cache'),
    baseUrl: origin,
    ci: 'true',
  });
  await buildCatalog({ config });
  const geoshelf = createServer({ config, serveData: true });
  const server = await listen(geoshelf, { port, hostname: '127.0.0.1' });
  return {
    origin,
    close: async () => {
      await server.close(true);
      await geoshelf.close();
    },
  };
}

/** `CHROME_PATH` when set, else the Chromium of `@sparticuz/chromium`, unpacked as the browser tests unpack it. */
export async function findChromium(): Promise<string> {
  if (process.env.CHROME_PATH) return process.env.CHROME_PATH;
  const packageJson = fileURLToPath(new URL('../package.json', import.meta.resolve('@sparticuz/chromium')));
  const { version } = JSON.parse(await readFile(packageJson, 'utf8')) as { version: string };
  const binary = join(tmpdir(), `geoshelf-chromium-${version}`, 'chromium');
  if (!existsSync(binary)) await (await startChromium()).close();
  return binary;
}

/** One Lighthouse navigation of `url` in the browser at `port`, with the default (mobile) config. */
export async function runLighthouse(url: string, port: number, options: { onlyCategories?: string[] } = {}): Promise<LighthouseRound> {
  const load = loadavg()[0]!;
  const result = await lighthouse(url, { port, output: 'json', logLevel: 'error', ...(options.onlyCategories ? { onlyCategories: options.onlyCategories } : {}) });
  if (!result) throw new Error(`Lighthouse gave no result for ${url}`);
  const lhr = result.lhr;
  if (lhr.runtimeError) throw new Error(`Lighthouse failed on ${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
  const scores = Object.fromEntries(CATEGORIES.map((id) => [id, lhr.categories[id]?.score ?? null])) as LighthouseRound['scores'];
  const numeric = (id: string) => lhr.audits[id]?.numericValue ?? NaN;
  const agentic = lhr.categories['agentic-browsing']?.auditRefs ?? [];
  return {
    scores,
    tbtMs: numeric('total-blocking-time'),
    lcpMs: numeric('largest-contentful-paint'),
    speedIndexMs: numeric('speed-index'),
    cls: numeric('cumulative-layout-shift'),
    rowsMs: readMark(lhr, ROWS_MARK),
    agenticFailures: agentic.filter((ref) => ref.weight > 0 && (lhr.audits[ref.id]?.score ?? 1) < 1).map((ref) => ref.id),
    load,
  };
}

/** The start time of a user-timing mark in a Lighthouse result, or null when the page did not set it. */
function readMark(lhr: Result, name: string): number | null {
  const items = (lhr.audits['user-timings']?.details as { items?: { name: string; startTime: number }[] } | undefined)?.items ?? [];
  return items.find((item) => item.name === name)?.startTime ?? null;
}

/** The lowest score of each category over the rounds. */
export function worstScores(rounds: LighthouseRound[]): LighthouseRound['scores'] {
  return Object.fromEntries(CATEGORIES.map((id) => {
    const values = rounds.map((round) => round.scores[id]);
    return [id, values.some((value) => value === null) ? null : Math.min(...(values as number[]))];
  })) as LighthouseRound['scores'];
}

function formatScores(scores: LighthouseRound['scores']): string {
  return CATEGORIES.map((id) => (scores[id] === null ? '–' : String(Math.round(scores[id]! * 100)))).join(' / ');
}

function describeRounds(rounds: LighthouseRound[]): string {
  const worst = rounds.reduce((a, b) => ((b.scores.performance ?? 0) < (a.scores.performance ?? 0) ? b : a));
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const rows = worst.rowsMs === null ? '' : `, rows at ${seconds(worst.rowsMs)} (observed)`;
  const failures = [...new Set(rounds.flatMap((round) => round.agenticFailures))];
  const agentic = failures.length ? `; agentic audits below 1: ${failures.join(', ')}` : '';
  const performance = rounds.map((round) => Math.round((round.scores.performance ?? 0) * 100)).join(', ');
  return `performance / accessibility / best practices / SEO / agentic browsing; performance by round ${performance}; worst: TBT ${Math.round(worst.tbtMs)} ms, LCP ${seconds(worst.lcpMs)}, SI ${seconds(worst.speedIndexMs)}, CLS ${worst.cls.toFixed(3)}${rows}; load ${rounds.map((round) => round.load.toFixed(1)).join(', ')}${agentic}`;
}
