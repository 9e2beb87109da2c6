/**
 * The web app's offline basemap: Natural Earth land polygons and country
 * borders (world-atlas 2.0.2, the same tables as the sample's GeoParquet) as
 * two small GeoJSON files in public/basemap, served at /_site/basemap/.
 * Coordinates are rounded to BASEMAP_DECIMALS and carry no properties, since
 * the basemap has no labels. Deterministic: two runs write the same bytes.
 *
 * @example node scripts/sample-data/basemap.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Position } from '../../core/geo/wkb.ts';
import { loadGeos } from './geos.ts';
import { buildCountryBorders, buildLand } from './natural-earth.ts';
import type { Resolution } from './natural-earth.ts';
import { removeRepeatedPositions } from './rings.ts';
import type { FeatureTable } from './table.ts';

/** public/basemap at the repository root; the site build copies public/ into /_site/. */
export const BASEMAP_DIR = fileURLToPath(new URL('../../public/basemap/', import.meta.url));

/** 1:110m: both files together are about 120 KB (43 KB gzipped); 1:50m land alone would be several times that. */
export const BASEMAP_RESOLUTION: Resolution = '110m';

/** 0.01° is about 1 km, far below what a 1:110m line can show (a 0.1 mm pen at that scale is 11 km). */
export const BASEMAP_DECIMALS = 2;

/** One written basemap file. */
export type BasemapFile = { name: string; parts: number; bytes: number };

const SCALE = 10 ** BASEMAP_DECIMALS;

function roundPositions(positions: Position[]): Position[] {
  // `+ 0` turns -0 into 0 so the text never holds "-0".
  const rounded = positions.map(([x = 0, y = 0]) => [Math.round(x * SCALE) / SCALE + 0, Math.round(y * SCALE) / SCALE + 0]);
  return removeRepeatedPositions(rounded);
}

/** Rounds the rings of a polygon, dropping rings that collapse (fewer than four positions); null when the exterior does. */
function roundPolygon(rings: Position[][]): Position[][] | null {
  const [exterior, ...holes] = rings.map(roundPositions);
  if (exterior === undefined || exterior.length < 4) return null;
  return [exterior, ...holes.filter((ring) => ring.length >= 4)];
}

/** The polygons of the table's rows, rounded, in row order; a row's MultiPolygon gives each of its polygons. */
export function listRoundedPolygons(table: FeatureTable): Position[][][] {
  return table.rows.flatMap((row) => {
    const geometry = row.geometry;
    if (geometry.type === 'Polygon') return [geometry.coordinates];
    if (geometry.type === 'MultiPolygon') return geometry.coordinates;
    throw new Error(`expected polygons, got ${geometry.type}`);
  }).map(roundPolygon).filter((rings) => rings !== null);
}

/** The lines of the table's rows, rounded, in row order; lines that collapse to a point are dropped. */
export function listRoundedLines(table: FeatureTable): Position[][] {
  return table.rows.flatMap((row) => {
    const geometry = row.geometry;
    if (geometry.type === 'LineString') return [geometry.coordinates];
    if (geometry.type === 'MultiLineString') return geometry.coordinates;
    throw new Error(`expected lines, got ${geometry.type}`);
  }).map(roundPositions).filter((line) => line.length >= 2);
}

/**
 * A FeatureCollection of one feature without properties whose Multi* geometry
 * holds `parts`, one part per text line: a basemap needs no per-feature data,
 * and a feature per part would cost about 80 bytes each.
 */
export function formatBasemapGeoJson(type: 'MultiPolygon' | 'MultiLineString', parts: unknown[]): string {
  const head = `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"${type}","coordinates":[`;
  return `${head}\n${parts.map((part) => JSON.stringify(part)).join(',\n')}\n]}}]}\n`;
}

/** Writes land.geojson and borders.geojson into `dir` (public/basemap by default). */
export async function writeBasemap(dir: string = BASEMAP_DIR): Promise<BasemapFile[]> {
  await loadGeos();
  mkdirSync(dir, { recursive: true });
  const polygons = listRoundedPolygons(buildLand(BASEMAP_RESOLUTION));
  const lines = listRoundedLines(buildCountryBorders(BASEMAP_RESOLUTION));
  const files: [string, string, number][] = [
    ['land.geojson', formatBasemapGeoJson('MultiPolygon', polygons), polygons.length],
    ['borders.geojson', formatBasemapGeoJson('MultiLineString', lines), lines.length],
  ];
  return files.map(([name, text, parts]) => {
    writeFileSync(join(dir, name), text);
    return { name, parts, bytes: Buffer.byteLength(text) };
  });
}

if (import.meta.main) {
  for (const file of await writeBasemap()) {
    console.log(`public/basemap/${file.name.padEnd(16)} ${String(file.parts).padStart(5)} parts ${file.bytes.toLocaleString('en-US').padStart(9)} bytes`);
  }
}
