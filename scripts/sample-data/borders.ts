/**
 * Borders between neighbouring polygons of one topology collection (countries,
 * US states): one row per neighbouring pair with the lines the pair shares.
 */
import type { Topology } from 'topojson-specification';
import { meshSharedBorders, readName, readFeatures } from './topology.ts';
import { repairTable } from './repair.ts';
import { createTable } from './table.ts';
import type { ColumnSpec, FeatureTable } from './table.ts';

/** One side of a border: the id may be null, so the name breaks ties. */
export type BorderSide = { id: string | null; name: string };

/** The four attribute columns of a border table: left id, left name, right id, right name. */
export type BorderColumns = [ColumnSpec, ColumnSpec, ColumnSpec, ColumnSpec];

/** Orders two sides by id (null ids last), then by name, in code-unit order (no locale). */
export function compareSides(a: BorderSide, b: BorderSide): number {
  if (a.id !== b.id) {
    if (a.id === null) return 1;
    if (b.id === null) return -1;
    return a.id < b.id ? -1 : 1;
  }
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * One row per pair of neighbouring features of `collection`, with the
 * MultiLineString they share. The side that sorts first is on the left, and
 * rows are sorted by (left, right), so the order does not depend on the source.
 * The lines go through the geometry pass of repair.ts.
 */
export function buildBorderTable(topology: Topology, collection: string, columns: BorderColumns): FeatureTable {
  const features = readFeatures(topology, collection);
  const readSide = (index: number): BorderSide => {
    const feature = features[index];
    if (feature === undefined) throw new Error(`no feature ${index} in ${collection}`);
    return { id: feature.id, name: readName(feature) };
  };
  const rows = meshSharedBorders(topology, collection).map((border) => {
    const [left, right] = [readSide(border.left), readSide(border.right)].sort(compareSides) as [BorderSide, BorderSide];
    return { left, right, geometry: border.geometry };
  });
  rows.sort((a, b) => compareSides(a.left, b.left) || compareSides(a.right, b.right));
  const table = createTable(
    columns,
    rows.map((row) => ({ values: [row.left.id, row.left.name, row.right.id, row.right.name], geometry: row.geometry })),
  );
  return repairTable(table, { label: (row) => `${row.values[1]}–${row.values[3]}` });
}
