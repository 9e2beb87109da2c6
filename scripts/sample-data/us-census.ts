/**
 * US boundaries from us-atlas 3.0.1 counties-10m.json (Census Bureau
 * cartographic boundaries, 2017 edition, unprojected lon/lat): states,
 * counties, the nation and the borders between neighbouring states.
 */
import { buildBorderTable } from './borders.ts';
import { readName, readFeatures } from './topology.ts';
import type { TopoFeature } from './topology.ts';
import { readTopology } from './sources.ts';
import { labelByColumn, repairTable } from './repair.ts';
import { createTable } from './table.ts';
import type { ColumnSpec, FeatureTable } from './table.ts';

const COUNTIES_FILE = 'counties-10m.json';

function readUsFeatures(collection: string): TopoFeature[] {
  return readFeatures(readTopology('us-atlas', COUNTIES_FILE), collection);
}

function requireId(feature: TopoFeature, digits: number): string {
  if (feature.id === null || !new RegExp(`^\\d{${digits}}$`).test(feature.id)) {
    throw new Error(`expected a ${digits}-digit FIPS code, got ${feature.id}`);
  }
  return feature.id;
}

/** States, DC and territories: 2-digit FIPS id and name, in source order. */
export function buildStates(): FeatureTable {
  const columns: ColumnSpec[] = [
    { name: 'id', type: 'VARCHAR', description: '2-digit state FIPS code' },
    { name: 'name', type: 'VARCHAR', description: 'State, district or territory name' },
  ];
  const rows = readUsFeatures('states').map((state) => ({
    values: [requireId(state, 2), readName(state)],
    geometry: state.geometry,
  }));
  const table = createTable(columns, rows);
  return repairTable(table, { label: labelByColumn(table, 'name') });
}

/**
 * Kept exactly as us-atlas has it: Falls Church city's ring is quantized to
 * two distinct points, so cleaning would leave the row without a geometry.
 */
export const KEPT_INVALID_COUNTIES: readonly string[] = ['51610 Falls Church'];

/** Counties and equivalents: 5-digit FIPS id, name, and their state's FIPS code and name. */
export function buildCounties(): FeatureTable {
  const stateNames = new Map(readUsFeatures('states').map((state) => [requireId(state, 2), readName(state)]));
  const columns: ColumnSpec[] = [
    { name: 'id', type: 'VARCHAR', description: '5-digit county FIPS code (state + county)' },
    { name: 'name', type: 'VARCHAR', description: 'County or county-equivalent name' },
    { name: 'state_fips', type: 'VARCHAR', description: 'First two digits of id: the state FIPS code' },
    { name: 'state_name', type: 'VARCHAR', description: 'Name of the state with that FIPS code' },
  ];
  const rows = readUsFeatures('counties').map((county) => {
    const id = requireId(county, 5);
    const stateFips = id.slice(0, 2);
    const stateName = stateNames.get(stateFips);
    if (stateName === undefined) throw new Error(`county ${id} has no state ${stateFips}`);
    return { values: [id, readName(county), stateFips, stateName], geometry: county.geometry };
  });
  const table = createTable(columns, rows);
  return repairTable(table, { label: (row) => `${row.values[0]} ${row.values[1]}`, keepInvalid: KEPT_INVALID_COUNTIES });
}

/** The nation: one MultiPolygon, no attributes (the source has none). */
export function buildNation(): FeatureTable {
  const rows = readUsFeatures('nation').map((nation) => ({ values: [], geometry: nation.geometry }));
  if (rows.length !== 1) throw new Error(`expected one nation geometry, got ${rows.length}`);
  return repairTable(createTable([], rows), { label: () => 'the nation' });
}

/** Interior borders: one row per pair of neighbouring states with the lines they share. */
export function buildStateBorders(): FeatureTable {
  const side = (which: 'left' | 'right', sorts: string): [ColumnSpec, ColumnSpec] => [
    { name: `${which}_fips`, type: 'VARCHAR', description: `FIPS code of the state that sorts ${sorts}` },
    { name: `${which}_name`, type: 'VARCHAR', description: 'Name of that state' },
  ];
  return buildBorderTable(readTopology('us-atlas', COUNTIES_FILE), 'states', [...side('left', 'first'), ...side('right', 'second')]);
}
