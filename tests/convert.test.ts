import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { Ajv, type ValidateFunction } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { convertFile } from '../generator/convert/convert-file.ts';
import { ConvertError } from '../generator/convert/convert-error.ts';
import { buildCatalog } from '../generator/build.ts';
import { makeTempCatalog, makeTempDir, ROOT } from './helpers/catalog.ts';
import { SPEC_DIR } from './helpers/stac-schemas.ts';

const CITIES = join(ROOT, 'catalog-data/data/geonames/cities/3.1.0/cities-15000.parquet');
const GEOPARQUET_SCHEMA = join(SPEC_DIR, 'geoparquet', 'v1.1.0', 'schema.json');
const PROJJSON_SCHEMA = join(SPEC_DIR, 'projjson', 'v0.7', 'projjson.schema.json');
const SAMPLE_ROWS = 3000;
/** Around Paris: a box a reader of a map view might ask for. */
const QUERY_BOX = [2, 48, 3, 49] as const;

let connection: DuckDBConnection;
let dir: string;
let validateGeo: ValidateFunction | undefined;

type CityRow = { city_id: number; name: string; population: bigint | null; wkb: string; bbox: string };

async function query(sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
}

function geoshelf(args: string[]) {
  return spawnSync(process.execPath, ['cli/geoshelf.ts', ...args], { cwd: ROOT, env: { ...process.env, CI: 'true' }, encoding: 'utf8' });
}

/** Rows of a GeoParquet file, by city id: attributes, geometry as WKB hex and the bbox covering as text. */
async function readCities(path: string): Promise<Map<number, CityRow>> {
  const rows = await query(
    `SELECT city_id, name, population, hex(st_asbinary(geometry)) AS wkb, bbox::VARCHAR AS bbox FROM read_parquet('${path}')`,
  );
  return new Map(rows.map((row) => [Number(row.city_id), row as CityRow]));
}

async function readGeo(path: string): Promise<Record<string, any>> {
  const [row] = await query(`SELECT decode(value) AS value FROM parquet_kv_metadata('${path}') WHERE decode(key) = 'geo'`);
  return JSON.parse(String(row!.value));
}

/** Row groups of a file, and how many of them a reader must open for a bbox query by their bbox statistics. */
async function countRowGroups(path: string, box: readonly [number, number, number, number]): Promise<{ total: number; read: number }> {
  const rows = await query(
    `SELECT row_group_id, min(CASE WHEN path_in_schema = 'bbox, xmin' THEN stats_min END)::DOUBLE AS xmin, ` +
      `max(CASE WHEN path_in_schema = 'bbox, xmax' THEN stats_max END)::DOUBLE AS xmax, ` +
      `min(CASE WHEN path_in_schema = 'bbox, ymin' THEN stats_min END)::DOUBLE AS ymin, ` +
      `max(CASE WHEN path_in_schema = 'bbox, ymax' THEN stats_max END)::DOUBLE AS ymax ` +
      `FROM parquet_metadata('${path}') GROUP BY row_group_id`,
  );
  const [west, south, east, north] = box;
  const read = rows.filter((group) => (group.xmin as number) <= east && (group.xmax as number) >= west && (group.ymin as number) <= north && (group.ymax as number) >= south);
  return { total: rows.length, read: read.length };
}

beforeAll(async () => {
  connection = await (await DuckDBInstance.create(':memory:')).connect();
  dir = await makeTempDir('geoshelf-convert-');
  const cities = `(SELECT * FROM read_parquet('${CITIES}') ORDER BY city_id LIMIT ${SAMPLE_ROWS})`;
  await connection.run(`COPY (SELECT city_id, name, population, bbox.xmin AS "Longitude", bbox.ymin AS "LAT" FROM ${cities}) TO '${dir}/lonlat.csv'`);
  await connection.run(`COPY (SELECT city_id, name, population, st_astext(geometry) AS wkt FROM ${cities}) TO '${dir}/wkt.csv'`);
  await connection.run(`COPY (SELECT city_id, name, population, st_asbinary(geometry) AS geometry FROM ${cities}) TO '${dir}/wkb.parquet'`);
  await connection.run(
    `COPY (SELECT name, bbox.xmin + copy * 0.001 AS lon, bbox.ymin + copy * 0.001 AS lat FROM read_parquet('${CITIES}'), range(8) AS copies(copy) ORDER BY name) TO '${dir}/many.csv'`,
  );
  const features = await query(`SELECT city_id, name, population, bbox.xmin AS x, bbox.ymin AS y FROM ${cities}`);
  await writeFile(join(dir, 'features.geojson'), JSON.stringify({
    type: 'FeatureCollection',
    features: features.map(({ x, y, ...properties }) => ({ type: 'Feature', properties, geometry: { type: 'Point', coordinates: [x, y] } })),
  }, (_key, value) => (typeof value === 'bigint' ? Number(value) : value)));
  if (existsSync(GEOPARQUET_SCHEMA)) {
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addSchema(JSON.parse(await readFile(PROJJSON_SCHEMA, 'utf8')));
    validateGeo = ajv.compile(JSON.parse(await readFile(GEOPARQUET_SCHEMA, 'utf8')));
  }
});

describe.each([
  ['a GeoJSON FeatureCollection', 'features.geojson'],
  ['a CSV with longitude/latitude columns', 'lonlat.csv'],
  ['a CSV with a WKT column', 'wkt.csv'],
  ['a plain Parquet file with a WKB column', 'wkb.parquet'],
])('converting %s', (_name, file) => {
  let output: string;
  beforeAll(async () => {
    output = join(dir, `${file}.out.parquet`);
    await convertFile({ input: join(dir, file), output });
  });

  it('keeps every row with its attributes and geometry', async () => {
    const expected = await query(`SELECT city_id, name, population, hex(st_asbinary(geometry)) AS wkb FROM read_parquet('${CITIES}') ORDER BY city_id LIMIT ${SAMPLE_ROWS}`);
    const converted = await readCities(output);
    expect(converted.size).toBe(SAMPLE_ROWS);
    for (const city of expected) {
      const row = converted.get(Number(city.city_id));
      expect({ name: row?.name, population: row?.population === null ? null : Number(row?.population), wkb: row?.wkb })
        .toEqual({ name: city.name, population: city.population === null ? null : Number(city.population), wkb: city.wkb });
    }
  });

  it('writes GeoParquet 1.1 metadata that the schema accepts, with a bbox covering and OGC:CRS84 as PROJJSON', async (context) => {
    const geo = await readGeo(output);
    expect(geo.version).toBe('1.1.0');
    expect(geo.primary_column).toBe('geometry');
    expect(geo.columns.geometry).toMatchObject({ encoding: 'WKB', geometry_types: ['Point'], covering: { bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] } } });
    expect(geo.columns.geometry.crs).toMatchObject({ type: 'GeographicCRS', id: { authority: 'OGC', code: 'CRS84' } });
    expect(geo.columns.geometry.crs.coordinate_system.axis.map((axis: { direction: string }) => axis.direction)).toEqual(['east', 'north']);
    const [extent] = await query(`SELECT min(bbox.xmin) AS xmin, min(bbox.ymin) AS ymin, max(bbox.xmax) AS xmax, max(bbox.ymax) AS ymax FROM read_parquet('${output}')`);
    expect(geo.columns.geometry.bbox).toEqual([extent!.xmin, extent!.ymin, extent!.xmax, extent!.ymax]);
    if (!validateGeo) {
      console.log(`skipped the GeoParquet schema check: ${GEOPARQUET_SCHEMA} is absent`);
      return context.skip();
    }
    expect(validateGeo(geo), JSON.stringify(validateGeo.errors)).toBe(true);
  });

  it('fills the bbox covering column with each row\'s bbox', async () => {
    const expected = await query(`SELECT city_id, bbox::VARCHAR AS bbox FROM read_parquet('${CITIES}') ORDER BY city_id LIMIT ${SAMPLE_ROWS}`);
    const converted = await readCities(output);
    for (const city of expected) expect(converted.get(Number(city.city_id))?.bbox).toBe(city.bbox);
  });

  it('compresses with zstd', async () => {
    const codecs = await query(`SELECT DISTINCT compression FROM parquet_metadata('${output}')`);
    expect(codecs.map((row) => row.compression)).toEqual(['ZSTD']);
  });
});

describe('row order', () => {
  it('puts nearby features in the same row groups, so a small bbox query reads few of them', async () => {
    const hilbert = join(dir, 'many-hilbert.parquet');
    const byName = join(dir, 'many-by-name.parquet');
    await convertFile({ input: join(dir, 'many.csv'), output: hilbert, rowGroupSize: 2048 });
    await connection.run(`COPY (SELECT * FROM read_parquet('${hilbert}') ORDER BY name) TO '${byName}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
    const sorted = await countRowGroups(hilbert, QUERY_BOX);
    const unsorted = await countRowGroups(byName, QUERY_BOX);
    expect(sorted.total).toBeGreaterThan(80);
    expect(unsorted.total).toBe(sorted.total);
    expect(sorted.read).toBeGreaterThan(0);
    expect(sorted.read / sorted.total).toBeLessThan(0.05);
    expect(sorted.read * 10).toBeLessThan(unsorted.read);
    console.log(`row groups read for ${QUERY_BOX.join(',')}: ${sorted.read} of ${sorted.total} in Hilbert order, ${unsorted.read} of ${unsorted.total} by name`);
  });
});

describe('a converted file in a catalog', () => {
  it('builds as a GeoParquet source with its count, bounds and geometry type, and no warning', async () => {
    const output = join(dir, 'catalog-cities.parquet');
    await convertFile({ input: join(dir, 'lonlat.csv'), output });
    const { config } = await makeTempCatalog({
      'formats.yaml': '- slug: geoparquet\n  format_type: geoparquet\n  name: GeoParquet\n  mime_type: application/vnd.apache.parquet\n',
      'datasets/places.yaml': [
        'slug: places', 'collection: maps', 'name: Places', 'files:', '  - slug: cities', '    name: Cities', '    formats:',
        '      - format: geoparquet', '        sources:', '          - version: 1', '            path: places/cities.parquet', '',
      ].join('\n'),
    }, { 'places/cities.parquet': output });
    const { warnings } = await buildCatalog({ config });
    const detail = JSON.parse(await readFile(join(config.distDir, 'api/collections/maps/datasets/places/files/cities/index.json'), 'utf8'));
    const metadata = detail.file.formats[0].sources[0].source_metadata;
    const geo = await readGeo(output);
    expect(metadata.feature_count).toBe(SAMPLE_ROWS);
    expect(metadata.geometry_type).toBe('Point');
    metadata.bounds.forEach((value: number, index: number) => expect(value).toBeCloseTo(geo.columns.geometry.bbox[index], 6));
    expect(warnings.filter((warning) => warning.includes('places/cities.parquet'))).toEqual([]);
  });
});

describe('geoshelf convert on the command line', () => {
  it('writes INPUT with the extension .parquet and exits 0', async () => {
    const input = join(dir, 'cli.csv');
    await writeFile(input, 'name,lng,lat\nParis,2.3522,48.8566\nLyon,4.8357,45.764\n');
    const result = geoshelf(['convert', input]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/cli\.parquet: 2 rows, Point/);
    const rows = await query(`SELECT name, st_astext(geometry) AS wkt FROM read_parquet('${join(dir, 'cli.parquet')}') ORDER BY name`);
    expect(rows).toEqual([{ name: 'Lyon', wkt: 'POINT (4.8357 45.764)' }, { name: 'Paris', wkt: 'POINT (2.3522 48.8566)' }]);
  });

  it('refuses to replace an existing output without --force, exits 1 and leaves it as it was', async () => {
    const input = join(dir, 'again.csv');
    await writeFile(input, 'name,lon,lat\nParis,2.3522,48.8566\n');
    await writeFile(join(dir, 'again.parquet'), 'keep me');
    const result = geoshelf(['convert', input]);
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(`✖ ${join(dir, 'again.parquet')}: it exists already; add --force to replace it`);
    expect(await readFile(join(dir, 'again.parquet'), 'utf8')).toBe('keep me');
    expect(geoshelf(['convert', input, '--force']).status).toBe(0);
    expect((await stat(join(dir, 'again.parquet'))).size).toBeGreaterThan(100);
  });

  it('lists the columns of a CSV without coordinates and exits 1', async () => {
    const input = join(dir, 'plain.csv');
    await writeFile(input, 'name,country,population\nParis,FR,2100000\n');
    const result = geoshelf(['convert', input]);
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([`✖ ${input}: it has no longitude/latitude or geometry column; its columns are: name, country, population (name them with --lon and --lat, --wkt or --geometry)`]);
    expect(existsSync(join(dir, 'plain.parquet'))).toBe(false);
  });
});

describe('a conversion that fails', () => {
  it.each([
    ['a .geojson file holding CSV', 'not-json.geojson', 'name,lon,lat\nParis,2.35,48.85\n', /not-json\.geojson: it is not GeoJSON/],
    ['a JSON object that is no FeatureCollection', 'object.geojson', '{"name": "Paris"}', /object\.geojson: it is not a GeoJSON FeatureCollection/],
    ['a WKT that does not parse', 'bad-wkt.csv', 'name,wkt\nParis,POINT (2.35 48.85)\nLyon,POINT (4.83)\n', /bad-wkt\.csv: row 2: "POINT \(4\.83\)" is not WKT/],
    ['a longitude out of range', 'projected.csv', 'name,x,y\nParis,2.35,48.85\nSomewhere,652000,6862000\n', /projected\.csv: row 2: its coordinates .* are not longitude\/latitude .*: name the CRS they are in with --crs/],
    ['a latitude that is not a number', 'text.csv', 'name,lon,lat\nParis,2.35,48.85\nLyon,4.83,north\n', /text\.csv: row 2: "north" is not a latitude/],
  ])('%s says why in one line, naming the file, and leaves no file behind', async (_name, file, text, message) => {
    await writeFile(join(dir, file), text);
    const before = await readdir(dir);
    const error = await convertFile({ input: join(dir, file) }).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConvertError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
    expect(await readdir(dir)).toEqual(before);
  });

  it('refuses a file that is GeoParquet already', async () => {
    const error = await convertFile({ input: CITIES, output: join(dir, 'again-cities.parquet') }).then(() => undefined, (thrown: unknown) => thrown);
    expect((error as Error).message).toMatch(/it is GeoParquet already/);
    expect(existsSync(join(dir, 'again-cities.parquet'))).toBe(false);
  });
});

describe('an input in another CRS', () => {
  // Swiss LV95 (EPSG:2056): the projection's origin, and a point 100 km east and 50 km north of it, with their
  // WGS84 positions from swisstopo's approximate formulas (good to about a metre, 1e-5 degrees).
  const LV95 = 'name,east,north\nBern,2600000,1200000\nNortheast,2700000,1250000\n';
  const EXPECTED = { Bern: [7.43864, 46.95108], Northeast: [8.76321, 47.39323] };

  it('reprojects the coordinates --crs names to longitude/latitude, and the metadata says OGC:CRS84', async () => {
    await writeFile(join(dir, 'lv95.csv'), LV95);
    const result = await convertFile({ input: join(dir, 'lv95.csv'), output: join(dir, 'lv95.parquet'), lon: 'east', lat: 'north', crs: 'EPSG:2056' });
    const rows = await query(`SELECT name, bbox.xmin AS lon, bbox.ymin AS lat, east FROM read_parquet('${result.output}') ORDER BY name`);
    expect(rows.map((row) => row.name)).toEqual(['Bern', 'Northeast']);
    for (const row of rows) {
      const [lon, lat] = EXPECTED[row.name as keyof typeof EXPECTED];
      expect(row.lon as number).toBeCloseTo(lon!, 4);
      expect(row.lat as number).toBeCloseTo(lat!, 4);
    }
    // The columns the coordinates came from stay as they were.
    expect(rows.map((row) => Number(row.east))).toEqual([2600000, 2700000]);
    expect(result.geo.columns.geometry.crs).toMatchObject({ id: { authority: 'OGC', code: 'CRS84' } });
  });

  it('takes a PROJ string on the command line, and WKT geometries in metres', async () => {
    await writeFile(join(dir, 'utm.csv'), 'name,wkt\nsquare,"POLYGON ((500000 5000000, 501000 5000000, 501000 5001000, 500000 5001000, 500000 5000000))"\n');
    const result = geoshelf(['convert', join(dir, 'utm.csv'), join(dir, 'utm.parquet'), '--crs', '+proj=utm +zone=32 +datum=WGS84 +units=m']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const [row] = await query(`SELECT bbox.xmin AS w, bbox.ymin AS s, bbox.xmax AS e, bbox.ymax AS n FROM read_parquet('${join(dir, 'utm.parquet')}')`);
    // Zone 32's central meridian is 9°E; 5,000 km north of the equator is about 45.15°N; 1 km is about 0.0127° of longitude there.
    expect(row!.w as number).toBeCloseTo(9, 6);
    expect(row!.s as number).toBeCloseTo(45.1535, 3);
    expect((row!.e as number) - (row!.w as number)).toBeCloseTo(0.0127, 3);
  });

  it('refuses a CRS it does not know, saying which it knows, and writes nothing', async () => {
    await writeFile(join(dir, 'unknown-crs.csv'), LV95);
    const error = await convertFile({ input: join(dir, 'unknown-crs.csv'), lon: 'east', lat: 'north', crs: 'EPSG:99999' }).then(() => undefined, (thrown: unknown) => thrown);
    expect((error as Error).message).toMatch(/unknown-crs\.csv: the CRS "EPSG:99999" is not one geoshelf knows offline: give an EPSG code it bundles \(EPSG:4326, 3857, 2056/);
    expect(existsSync(join(dir, 'unknown-crs.parquet'))).toBe(false);
  });

  it('says when --crs is wrong for the data', async () => {
    await writeFile(join(dir, 'wrong-crs.csv'), 'name,x,y\nfar,1e9,1e9\n');
    const error = await convertFile({ input: join(dir, 'wrong-crs.csv'), crs: 'EPSG:3857' }).then(() => undefined, (thrown: unknown) => thrown);
    expect((error as Error).message).toMatch(/wrong-crs\.csv: row 1: its coordinates reprojected by --crs are .*, not longitude\/latitude: is --crs the CRS the file is in\?/);
  });
});

describe('layers GDAL reads', () => {
  it('converts a shapefile and a GeoPackage layer, the same features as their GeoParquet twins in the sample', async () => {
    const megacities = join(ROOT, 'catalog-data/data/geonames/megacities/3.1.0');
    const shapefile = await convertFile({ input: join(megacities, 'megacities.shp'), output: join(dir, 'megacities-from-shp.parquet') });
    const [{ n: expected }] = await query(`SELECT count(*)::INTEGER AS n FROM read_parquet('${join(megacities, 'megacities.parquet')}')`) as [{ n: number }];
    expect(shapefile.rows).toBe(expected);
    expect(shapefile.geo.columns.geometry.geometry_types).toEqual(['Point']);
    // The same places at the same coordinates (the .dbf cuts three column names, so compare by id).
    const moved = await query(`SELECT count(*)::INTEGER AS n FROM read_parquet('${shapefile.output}') s JOIN read_parquet('${join(megacities, 'megacities.parquet')}') p ON s.city_id = p.city_id WHERE abs(s.bbox.xmin - p.bbox.xmin) > 1e-6 OR abs(s.bbox.ymin - p.bbox.ymin) > 1e-6`);
    expect(moved).toEqual([{ n: 0 }]);

    const gpkg = join(ROOT, 'catalog-data/data/us-census/us-boundaries/3.0.1/us-boundaries.gpkg');
    const several = await convertFile({ input: gpkg, output: join(dir, 'states.parquet') }).then(() => undefined, (thrown: unknown) => thrown);
    expect((several as Error).message).toMatch(/it has 4 layers \(.*states.*\): choose one with --layer/);
    const states = await convertFile({ input: gpkg, layer: 'states', output: join(dir, 'states.parquet') });
    const [{ n: stateCount }] = await query(`SELECT count(*)::INTEGER AS n FROM read_parquet('${join(ROOT, 'catalog-data/data/us-census/us-boundaries/3.0.1/states.parquet')}')`) as [{ n: number }];
    expect(states.rows).toBe(stateCount);
    // GeoPackage layers declare MultiPolygon; the extent is the sample GeoParquet file's.
    expect(states.geo.columns.geometry.geometry_types).toEqual(['MultiPolygon']);
    const [extent] = await query(`SELECT min(bbox.xmin) AS w, min(bbox.ymin) AS s, max(bbox.xmax) AS e, max(bbox.ymax) AS n FROM read_parquet('${join(ROOT, 'catalog-data/data/us-census/us-boundaries/3.0.1/states.parquet')}')`) as [{ w: number; s: number; e: number; n: number }];
    states.geo.columns.geometry.bbox.forEach((value, index) => expect(value).toBeCloseTo([extent.w, extent.s, extent.e, extent.n][index]!, 5));
  });
});
