/**
 * Countries from world-atlas 1.1.4 (Natural Earth 2.0.0) joined to the
 * attribute tables the package ships beside each topology.
 *
 * The join: world-atlas' prepublish wrote the topology in shapefile order and
 * the .tsv sorted by iso_a3, and iso_n3 (the topology id) is not unique ("-99"
 * 3× at 110m, 5× at 50m; "036" 2× at 50m). The shapefile turns out to be in
 * adm0_a3 order, so sorting the tsv rows by adm0_a3 lines them up with the
 * geometries. `joinCountryAttributes` checks it on every row: equal iso_n3 on
 * each pair, each adm0_a3 used once. With 177 and 241 rows interleaving the
 * ambiguous ids among unique ones, any other order would fail that check.
 */
import { readFeatures } from './topology.ts';
import type { TopoFeature } from './topology.ts';
import { parseTsv, readPackageText, readTopology } from './sources.ts';
import { labelByColumn, repairTable } from './repair.ts';
import { createTable } from './table.ts';
import type { CellValue, ColumnSpec, FeatureTable } from './table.ts';

/** A scale shipped by world-atlas 1.1.4. */
export type LegacyResolution = '110m' | '50m';

type Attribute = { column: ColumnSpec; field: string };

const defineText = (name: string, description: string, field = name): Attribute => ({
  column: { name, type: 'VARCHAR', description },
  field,
});

/** The tsv fields kept, with their output columns; Natural Earth's "-99" and "" become null. */
export const LEGACY_ATTRIBUTES: readonly Attribute[] = [
  defineText('adm0_a3', 'Natural Earth ADM0_A3 code, unique per row (the join key)'),
  defineText('name', 'Short English name'),
  defineText('name_long', 'Long English name'),
  defineText('formal_en', 'Formal English name'),
  defineText('iso_a2', 'ISO 3166-1 alpha-2 code'),
  defineText('iso_a3', 'ISO 3166-1 alpha-3 code'),
  defineText('continent', 'Continent'),
  defineText('region_un', 'United Nations region'),
  defineText('subregion', 'United Nations subregion'),
  { column: { name: 'pop_est', type: 'BIGINT', description: 'Population estimate' }, field: 'pop_est' },
  { column: { name: 'gdp_md_est', type: 'DOUBLE', description: 'GDP estimate, millions of US dollars' }, field: 'gdp_md_est' },
  defineText('economy', 'Economy group, e.g. "6. Developing region"'),
  defineText('income_grp', 'World Bank income group, e.g. "4. Lower middle income"'),
];

/** Turns a tsv cell into a typed value: "-99" and "" are Natural Earth's missing values. */
export function parseAttribute(value: string, column: ColumnSpec): CellValue {
  if (value === '' || value === '-99') return null;
  if (column.type === 'VARCHAR') return value;
  const number = Number(value);
  if (!Number.isFinite(number) || (column.type === 'BIGINT' && !Number.isInteger(number))) {
    throw new Error(`${column.name}: "${value}" is not a ${column.type}`);
  }
  return number;
}

/** Pairs each geometry with its tsv row (see the module comment); throws if any pair disagrees. */
export function joinCountryAttributes(features: TopoFeature[], rows: Record<string, string>[]): Record<string, string>[] {
  if (features.length !== rows.length) throw new Error(`${features.length} geometries but ${rows.length} tsv rows`);
  const sorted = [...rows].sort((a, b) => compareCodes(a['adm0_a3'] ?? '', b['adm0_a3'] ?? ''));
  const seen = new Set<string>();
  features.forEach((feature, index) => {
    const row = sorted[index];
    const code = row?.['adm0_a3'] ?? '';
    if (row === undefined || row['iso_n3'] !== feature.id || seen.has(code)) {
      throw new Error(`geometry ${index} (id ${feature.id}) does not match tsv row ${code} (iso_n3 ${row?.['iso_n3']})`);
    }
    seen.add(code);
  });
  return sorted;
}

function compareCodes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Countries with the Natural Earth attributes above, one row per geometry in source order. */
export function buildLegacyCountries(resolution: LegacyResolution): FeatureTable {
  const features = readFeatures(readTopology('world-atlas-1', `world/${resolution}.json`), 'countries');
  const rows = joinCountryAttributes(features, parseTsv(readPackageText('world-atlas-1', `world/${resolution}.tsv`)));
  const id: ColumnSpec = { name: 'id', type: 'VARCHAR', description: 'ISO 3166-1 numeric code (iso_n3, the topology id); null where "-99"' };
  const table = createTable(
    [id, ...LEGACY_ATTRIBUTES.map((attribute) => attribute.column)],
    features.map((feature, index) => {
      const row = rows[index] ?? {};
      const values = LEGACY_ATTRIBUTES.map(({ column, field }) => parseAttribute(row[field] ?? '', column));
      return { values: [feature.id === '-99' ? null : feature.id, ...values], geometry: feature.geometry };
    }),
    [`joined ${features.length}/${rows.length} tsv rows by adm0_a3 order, iso_n3 equal on every row`],
  );
  return repairTable(table, { label: labelByColumn(table, 'name') });
}
