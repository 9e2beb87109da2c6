/**
 * Natural Earth tables from world-atlas 2.0.2 (Natural Earth 4.1.0): countries,
 * land polygons, coastlines and the borders between neighbouring countries.
 */
import { buildBorderTable } from './borders.ts';
import { explodePolygons, meshLines, readName, readFeatures } from './topology.ts';
import { labelByColumn, repairTable } from './repair.ts';
import { readTopology } from './sources.ts';
import { createTable } from './table.ts';
import type { ColumnSpec, FeatureTable } from './table.ts';

/** A Natural Earth scale shipped by world-atlas. */
export type Resolution = '110m' | '50m' | '10m';

const ID_COLUMN: ColumnSpec = {
  name: 'id',
  type: 'VARCHAR',
  description: 'ISO 3166-1 numeric code as a zero-padded string, as in the topology; null for areas without one',
};
const NAME_COLUMN: ColumnSpec = { name: 'name', type: 'VARCHAR', description: 'Short English name (Natural Earth NAME)' };

/**
 * Countries whose upstream geometry GEOS calls invalid, kept exactly as
 * world-atlas has them so the catalog's quality flags have true examples:
 * Sudan's 110m ring crosses itself; Vatican's 10m ring is quantized to two
 * distinct points, so cleaning would leave the row without a geometry.
 */
export const KEPT_INVALID_COUNTRIES: Readonly<Partial<Record<Resolution, readonly string[]>>> = { '110m': ['Sudan'], '10m': ['Vatican'] };

/** Countries with their ISO numeric id and name, one row per country in source order. */
export function buildCountries(resolution: Resolution): FeatureTable {
  const features = readFeatures(readTopology('world-atlas', `countries-${resolution}.json`), 'countries');
  const table = createTable(
    [ID_COLUMN, NAME_COLUMN],
    features.map((feature) => ({ values: [feature.id, readName(feature)], geometry: feature.geometry })),
  );
  return repairTable(table, { label: labelByColumn(table, 'name'), keepInvalid: KEPT_INVALID_COUNTRIES[resolution] });
}

/** The land MultiPolygon exploded into one row per polygon; part keeps the source index when a polygon collapses. */
export function buildLand(resolution: Resolution): FeatureTable {
  const polygons = readFeatures(readTopology('world-atlas', `land-${resolution}.json`), 'land').flatMap((land) =>
    explodePolygons(land.geometry),
  );
  const part: ColumnSpec = { name: 'part', type: 'INTEGER', description: '0-based index of the polygon in the source MultiPolygon' };
  const table = createTable([part], polygons.map((polygon, index) => ({ values: [index], geometry: polygon })));
  return repairTable(table, { label: labelByColumn(table, 'part', 'part ') });
}

/** The mesh of the land object (every arc once), one line per row, cut at the antimeridian. */
export function buildCoastlines(resolution: Resolution): FeatureTable {
  const topology = readTopology('world-atlas', `land-${resolution}.json`);
  const segment: ColumnSpec = { name: 'segment', type: 'INTEGER', description: '0-based index of the line in the mesh' };
  const table = createTable([segment], meshLines(topology, 'land').map((line, index) => ({ values: [index], geometry: line })));
  return repairTable(table, { label: labelByColumn(table, 'segment', 'segment ') });
}

/** Borders between neighbouring countries, from the arcs each pair shares. */
export function buildCountryBorders(resolution: Resolution): FeatureTable {
  const topology = readTopology('world-atlas', `countries-${resolution}.json`);
  const side = (which: 'left' | 'right', sorts: string): [ColumnSpec, ColumnSpec] => [
    { name: `${which}_id`, type: 'VARCHAR', description: `ISO 3166-1 numeric code of the country that sorts ${sorts}; null if it has none` },
    { name: `${which}_name`, type: 'VARCHAR', description: `Name of that country` },
  ];
  return buildBorderTable(topology, 'countries', [...side('left', 'first'), ...side('right', 'second')]);
}
