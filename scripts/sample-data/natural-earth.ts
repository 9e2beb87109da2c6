/**
 * Natural Earth tables from world-atlas 2.0.2 (Natural Earth 4.1.0): countries,
 * land polygons, coastlines and the borders between neighbouring countries.
 */
import { buildBorderTable } from './borders.ts';
import { explodePolygons, meshLines, readName, readFeatures } from './topology.ts';
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

/** Countries with their ISO numeric id and name, one row per country in source order. */
export function buildCountries(resolution: Resolution): FeatureTable {
  const notes: string[] = [];
  const features = readFeatures(readTopology('world-atlas', `countries-${resolution}.json`), 'countries', notes);
  return createTable(
    [ID_COLUMN, NAME_COLUMN],
    features.map((feature) => ({ values: [feature.id, readName(feature)], geometry: feature.geometry })),
    notes,
  );
}

/** The land MultiPolygon exploded into one row per polygon. */
export function buildLand(resolution: Resolution): FeatureTable {
  const notes: string[] = [];
  const polygons = readFeatures(readTopology('world-atlas', `land-${resolution}.json`), 'land', notes).flatMap((land) =>
    explodePolygons(land.geometry),
  );
  const part: ColumnSpec = { name: 'part', type: 'INTEGER', description: '0-based index of the polygon in the source MultiPolygon' };
  return createTable([part], polygons.map((polygon, index) => ({ values: [index], geometry: polygon })), notes);
}

/** The mesh of the land object (every arc once), one LineString per row. */
export function buildCoastlines(resolution: Resolution): FeatureTable {
  const topology = readTopology('world-atlas', `land-${resolution}.json`);
  const segment: ColumnSpec = { name: 'segment', type: 'INTEGER', description: '0-based index of the line in the mesh' };
  return createTable([segment], meshLines(topology, 'land').map((line, index) => ({ values: [index], geometry: line })));
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
