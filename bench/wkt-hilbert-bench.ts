/**
 * `npm run bench -- wkt` (or `npx node bench/wkt-hilbert-bench.ts`): the two hand-written pieces of `geoshelf
 * convert` against the npm libraries that do the same, in the same run, so the project's rule ("prefer a
 * well-kept library where one measures as well") rests on figures.
 * - WKT (`core/geo/wkt-read.ts`) against wkx, betterknown, wellknown and @terraformer/wkt: a table of the
 *   spellings CSV files carry and of garbage that must be refused, then 1,000,000 point WKTs and 100,000 polygon
 *   WKTs of 50 vertices, several rounds in a random order.
 * - The Hilbert index (`core/geo/hilbert.ts`) against hilbert and hilbert-curve: the same index on every point,
 *   a curve whose consecutive cells touch, then 1,000,000 indexes, several rounds.
 * The candidates are not dependencies of geoshelf: the first run installs their pinned versions into
 * `bench/.work/wkt-hilbert/` (ignored by git) with npm.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { readWkt } from '../core/geo/wkt-read.ts';
import { hilbertIndex, HILBERT_SIDE } from '../core/geo/hilbert.ts';
import { median } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { createRandom } from './synthetic-catalog.ts';
import { checkWktReaders, type WktReader } from './wkt-cases.ts';

const CANDIDATES = { wkx: '0.5.0', betterknown: '1.2.0', wellknown: '0.5.0', '@terraformer/wkt': '2.2.2', hilbert: '2.0.0', 'hilbert-curve': '2.0.5' };
const ROUNDS = 5;
const POINTS = 1_000_000;
const POLYGONS = 100_000;
const VERTICES = 50;
const INDEXES = 1_000_000;

type Bench = Pick<BenchContext, 'repo' | 'section' | 'report'>;

export async function benchWktHilbert(bench: Bench): Promise<void> {
  const load = installCandidates(join(bench.repo, 'bench/.work/wkt-hilbert'));
  const readers = loadWktReaders(load);
  bench.section('WKT reading and the Hilbert index: hand-written against npm libraries');
  reportSizes(bench, join(bench.repo, 'bench/.work/wkt-hilbert/node_modules'));
  for (const row of checkWktReaders(readers)) bench.report(row.name, row.value, row.note);
  timeWktReaders(bench, readers);
  benchHilbert(bench, load);
}

function installCandidates(dir: string): NodeJS.Require {
  const installed = (name: string) => {
    const manifest = join(dir, 'node_modules', name, 'package.json');
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === CANDIDATES[name as keyof typeof CANDIDATES];
  };
  if (!Object.keys(CANDIDATES).every(installed)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
    const specs = Object.entries(CANDIDATES).map(([name, version]) => `${name}@${version}`);
    execFileSync('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', ...specs], { cwd: dir, stdio: 'inherit' });
  }
  return createRequire(join(dir, 'package.json'));
}

/** Each reader as convert would call it: WKT text to a GeoJSON geometry, or null where the library gives null. */
function loadWktReaders(load: NodeJS.Require): WktReader[] {
  const wkx = load('wkx');
  const betterknown = load('betterknown');
  const wellknown = load('wellknown');
  const terraformer = load('@terraformer/wkt');
  return [
    { name: 'ours', read: readWkt },
    { name: 'wkx', read: (text) => wkx.Geometry.parse(text).toGeoJSON() },
    { name: 'betterknown', read: (text) => betterknown.wktToGeoJSON(text) },
    { name: 'wellknown', read: (text) => wellknown.parse(text) },
    { name: '@terraformer/wkt', read: (text) => terraformer.wktToGeoJSON(text) },
  ];
}

/** The package's own files and what it brings along (the whole install closure is in BENCHMARKS.md). */
function reportSizes(bench: Bench, modules: string): void {
  const sizes = Object.keys(CANDIDATES).map((name) => {
    const manifest = JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const dependencies = Object.keys(manifest.dependencies ?? {});
    return `${name} ${Math.round(sizeOf(join(modules, name)) / 1024)} KiB${dependencies.length ? ` + ${dependencies.join(', ')}` : ''}`;
  });
  bench.report('candidates: unpacked size, and their dependencies', sizes.join('; '), 'ours: core/geo/wkt-read.ts and core/geo/hilbert.ts, no dependency');
}

function sizeOf(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.size;
  return readdirSync(path).filter((name) => name !== 'node_modules').reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

function timeWktReaders(bench: Bench, readers: WktReader[]): void {
  const { points, polygons } = writeWkts();
  for (const reader of readers) {
    // Warm up each reader; one that cannot read these texts at all stops the bench rather than time its errors.
    const failed = [points[0]!, polygons[0]!].filter((text) => !canRead(reader, text));
    if (failed.length) throw new Error(`${reader.name} cannot read ${failed.join(' or ').slice(0, 80)}…`);
    for (let index = 0; index < 20_000; index++) reader.read(points[index]!);
    for (let index = 0; index < 2_000; index++) reader.read(polygons[index]!);
  }
  for (const [label, texts] of [[`${POINTS.toLocaleString('en-US')} point WKTs`, points], [`${POLYGONS.toLocaleString('en-US')} polygon WKTs of ${VERTICES} vertices`, polygons]] as const) {
    const times = new Map(readers.map((reader) => [reader.name, [] as number[]]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const reader of shuffle(readers)) times.get(reader.name)!.push(timeReads(reader, texts));
    }
    reportRounds(bench, `read ${label}, ms`, times);
  }
}

function canRead(reader: WktReader, text: string): boolean {
  try {
    return reader.read(text) !== null;
  } catch {
    return false;
  }
}

function timeReads(reader: WktReader, texts: string[]): number {
  let read = 0;
  const started = performance.now();
  for (const text of texts) if (reader.read(text) !== null) read++;
  const ms = performance.now() - started;
  if (read !== texts.length) throw new Error(`${reader.name} read ${read} geometries of ${texts.length}`);
  return ms;
}

/** Points over the world and 50-vertex rings around them, with 7 decimals as CSV exports of GPS data carry. */
function writeWkts(): { points: string[]; polygons: string[] } {
  const random = createRandom(26);
  const coordinate = (min: number, span: number) => (min + random() * span).toFixed(7);
  const points = Array.from({ length: POINTS }, () => `POINT (${coordinate(-180, 360)} ${coordinate(-90, 180)})`);
  const polygons = Array.from({ length: POLYGONS }, () => {
    const [x, y] = [-170 + random() * 340, -80 + random() * 160];
    const ring = Array.from({ length: VERTICES - 1 }, (_, vertex) => {
      const angle = (vertex / (VERTICES - 1)) * 2 * Math.PI;
      const radius = 0.01 + random() * 0.05;
      return `${(x + radius * Math.cos(angle)).toFixed(7)} ${(y + radius * Math.sin(angle)).toFixed(7)}`;
    });
    return `POLYGON ((${[...ring, ring[0]].join(', ')}))`;
  });
  return { points, polygons };
}

function benchHilbert(bench: Bench, load: NodeJS.Require): void {
  const { Hilbert2d } = load('hilbert');
  const curve = new Hilbert2d(HILBERT_SIDE);
  const { pointToIndex, indexToPoint } = load('hilbert-curve');
  const extent = [-180, -90, 180, 90] as const;
  const indexers: { name: string; index: (x: number, y: number) => number }[] = [
    { name: 'ours', index: (x, y) => hilbertIndex(x, y, extent) },
    // Its curve is ours mirrored across the diagonal, so the axes are swapped to compare the same order.
    { name: 'hilbert', index: (x, y) => curve.d(toCell(y, -90, 90), toCell(x, -180, 180)) },
    { name: 'hilbert-curve', index: (x, y) => pointToIndex({ x: toCell(x, -180, 180), y: toCell(y, -90, 90) }, 16) },
  ];
  const random = createRandom(32);
  const xs = Float64Array.from({ length: INDEXES }, (_, index) => (index < 4 ? [-180, 180][index % 2]! : -180 + random() * 360));
  const ys = Float64Array.from({ length: INDEXES }, (_, index) => (index < 4 ? [-90, 90][index >> 1]! : -90 + random() * 180));
  const differ = indexers.slice(1).map(({ name, index }) => `${name} ${countDifferences(xs, ys, index, indexers[0]!.index)}`);
  const gaps = [
    `hilbert ${countGaps((d) => curve.xy(d), (x, y) => curve.d(x, y))}`,
    `hilbert-curve ${countGaps((d) => indexToPoint(d, 16), (x, y) => pointToIndex({ x, y }, 16))}`,
  ];
  bench.report(
    'Hilbert index: points whose index differs from ours; consecutive indexes whose cells do not touch or do not invert',
    `${differ.join(', ')} of ${INDEXES.toLocaleString('en-US')}; ${gaps.join(', ')} of 100,000`,
    'four corners of the extent, then random points; the walk is checked with each library\'s own inverse (ours has none: equal indexes stand for it)',
  );
  const times = new Map(indexers.map(({ name }) => [name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const { name, index } of shuffle(indexers)) {
      let sum = 0;
      const started = performance.now();
      for (let at = 0; at < INDEXES; at++) sum += index(xs[at]!, ys[at]!);
      times.get(name)!.push(performance.now() - started);
      if (!(sum > 0)) throw new Error(`${name} gave no index`);
    }
  }
  reportRounds(bench, `${INDEXES.toLocaleString('en-US')} Hilbert indexes over the world, ms`, times);
}

/** As hilbert.ts puts a coordinate in one of 2^16 cells per axis. */
function toCell(value: number, min: number, max: number): number {
  const cell = Math.floor(((value - min) / (max - min)) * HILBERT_SIDE);
  return cell < 0 ? 0 : cell >= HILBERT_SIDE ? HILBERT_SIDE - 1 : cell;
}

function countDifferences(xs: Float64Array, ys: Float64Array, index: (x: number, y: number) => number, ours: (x: number, y: number) => number): number {
  let count = 0;
  for (let at = 0; at < xs.length; at++) if (index(xs[at]!, ys[at]!) !== ours(xs[at]!, ys[at]!)) count++;
  return count;
}

function countGaps(cellOf: (d: number) => { x: number; y: number }, indexOf: (x: number, y: number) => number): number {
  const random = createRandom(7);
  let count = 0;
  for (let run = 0; run < 100_000; run++) {
    const d = Math.floor(random() * (HILBERT_SIDE * HILBERT_SIDE - 1));
    const [a, b] = [cellOf(d), cellOf(d + 1)];
    if (Math.abs(a.x - b.x) + Math.abs(a.y - b.y) !== 1 || indexOf(a.x, a.y) !== d) count++;
  }
  return count;
}

/** One row per candidate: each round's time, its ratio to ours in that round, and the median ratio. */
function reportRounds(bench: Bench, label: string, times: Map<string, number[]>): void {
  const ours = times.get('ours')!;
  for (const [name, rounds] of times) {
    const ratios = rounds.map((ms, round) => ms / ours[round]!);
    bench.report(
      `${label}: ${name}`,
      rounds.map((ms) => ms.toFixed(0)).join(', '),
      name === 'ours' ? `${ROUNDS} rounds, median ${median(rounds).toFixed(0)} ms` : `× ours per round: ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}; median ${median(ratios).toFixed(2)}×`,
    );
  }
}

function shuffle<T>(items: T[]): T[] {
  const shuffled = [...items];
  for (let index = shuffled.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [shuffled[index], shuffled[other]] = [shuffled[other]!, shuffled[index]!];
  }
  return shuffled;
}

if (import.meta.main) {
  await benchWktHilbert({
    repo: new URL('..', import.meta.url).pathname.replace(/\/$/, ''),
    section: (title) => console.log(`\n## ${title}\n\n| figure | value | notes |\n|---|---|---|`),
    report: (name, value, note) => console.log(`| ${name} | ${value} | ${note} |`),
  });
}
