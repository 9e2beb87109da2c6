import { spawn } from 'node:child_process';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertFile } from '../generator/convert/convert-file.ts';
import { ConvertError } from '../generator/convert/convert-error.ts';
import { streamLayerAsGeoJson, writeLayerAsGeoJson } from '../generator/enrich/inspect-gdal.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';

const MEGACITIES = join(ROOT, 'catalog-data/data/geonames/megacities/3.1.0/megacities.shp');
const US_BOUNDARIES = join(ROOT, 'catalog-data/data/us-census/us-boundaries/3.0.1/us-boundaries.gpkg');

/** Features whose strings hold what a byte scanner could trip on, and one without a geometry. */
const FEATURES = [
  {
    type: 'Feature', id: 1, geometry: { type: 'Point', coordinates: [2.35, 48.85] },
    properties: { rank: 1, name: 'a ] bracket, a } brace', note: 'a \\" quote and a \\\\ backslash\\', city: 'Montréal', nested: { features: [1, 2], label: 'not the features' } },
  },
  {
    type: 'Feature', id: 2, geometry: { type: 'LineString', coordinates: [[0, 0], [1, 1.5]] },
    properties: { rank: 2, name: 'line\nbreak\r\nand\ttab', note: '[{"type":"Feature"}], "features": [', city: '東京', nested: { features: [], label: '{' } },
  },
  {
    type: 'Feature', id: 3, geometry: null,
    properties: { rank: 3, name: '\u001e record separator', note: '\\u00e9 written out', city: 'Zürich', nested: { features: [3], label: '}' } },
  },
];

let connection: DuckDBConnection;
let dir: string;

async function query(sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
}

/** Every row of a converted file, attributes and geometry as WKT, by rank. */
async function readRows(path: string): Promise<Record<string, unknown>[]> {
  return query(`SELECT * EXCLUDE (geometry, bbox), st_astext(geometry) AS wkt FROM read_parquet('${path}') ORDER BY rank`);
}

async function convertText(name: string, text: string): Promise<Record<string, unknown>[]> {
  await writeFile(join(dir, name), text);
  await convertFile({ input: join(dir, name), output: join(dir, `${name}.parquet`), force: true });
  return readRows(join(dir, `${name}.parquet`));
}

/** A FeatureCollection of `count` points written by `properties(index)`, one feature a line. */
async function writePoints(path: string, count: number, properties: (index: number) => Record<string, unknown>): Promise<void> {
  const lines = ['{"type":"FeatureCollection","features":['];
  for (let index = 0; index < count; index++) {
    const feature = { type: 'Feature', properties: properties(index), geometry: { type: 'Point', coordinates: [(index % 3600) / 10 - 180, (index % 1700) / 10 - 85] } };
    lines.push(`${index === 0 ? '' : ','}${JSON.stringify(feature)}`);
  }
  lines.push(']}');
  await writeFile(path, lines.join('\n'));
}

/** Converts `input` in a process of its own and returns its peak resident set, in MB. */
async function measurePeakMb(input: string): Promise<number> {
  const script = `import { convertFile } from ${JSON.stringify(join(ROOT, 'generator/convert/convert-file.ts'))};
    await convertFile({ input: ${JSON.stringify(input)}, output: ${JSON.stringify(`${input}.parquet`)}, force: true });
    console.log(process.resourceUsage().maxRSS);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data));
  child.stderr.on('data', (data: Buffer) => (stderr += data));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  expect(code, stderr).toBe(0);
  return Number(stdout.trim()) / 1024;
}

beforeAll(async () => {
  connection = await (await DuckDBInstance.create(':memory:')).connect();
  dir = await makeTempDir('geoshelf-convert-stream-');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a GeoJSON FeatureCollection read a chunk at a time', () => {
  let compact: Record<string, unknown>[];
  beforeAll(async () => {
    compact = await convertText('compact.geojson', JSON.stringify({ type: 'FeatureCollection', features: FEATURES }));
  });

  it('keeps every feature with its properties, and a feature without a geometry as a row without one', () => {
    expect(compact).toEqual([
      { rank: 1n, name: 'a ] bracket, a } brace', note: 'a \\" quote and a \\\\ backslash\\', city: 'Montréal', nested: { features: [1n, 2n], label: 'not the features' }, wkt: 'POINT (2.35 48.85)' },
      { rank: 2n, name: 'line\nbreak\r\nand\ttab', note: '[{"type":"Feature"}], "features": [', city: '東京', nested: { features: [], label: '{' }, wkt: 'LINESTRING (0 0, 1 1.5)' },
      { rank: 3n, name: '\u001e record separator', note: '\\u00e9 written out', city: 'Zürich', nested: { features: [3n], label: '}' }, wkt: null },
    ]);
  });

  it('reads a pretty-printed file with CRLF line ends, a BOM, escaped unicode and "features" after other keys the same way', async () => {
    const features = JSON.stringify(FEATURES, null, 2).replaceAll('ü', '\\u00fc').replaceAll('é', '\\u00e9');
    const text = `\uFEFF{\n  "type": "FeatureCollection",\n  "name": "tricky ] } \\" names",\n  "crs": { "type": "name", "properties": { "name": "urn:ogc:def:crs:OGC:1.3:CRS84" } },\n  "bbox": [0, 0, 3, 49],\n  "meta": { "features": [{ "type": "Feature" }] },\n  "feat\\u0075res": ${features},\n  "after": { "features": [] }\n}\n`;
    expect(await convertText('pretty.geojson', text.replaceAll('\n', '\r\n'))).toEqual(compact);
  });

  it.each([
    ['a GeoJSON Text Sequence (RS before each feature, some pretty-printed)', 'features.geojsons', FEATURES.map((feature, index) => `\u001e${JSON.stringify(feature, null, index)}\n`).join('')],
    ['newline-delimited GeoJSON (.geojsonl)', 'features.geojsonl', FEATURES.map((feature) => JSON.stringify(feature)).join('\n')],
    ['newline-delimited GeoJSON (.ndjson) with CRLF and blank lines', 'features.ndjson', `\r\n${FEATURES.map((feature) => JSON.stringify(feature)).join('\r\n\r\n')}\r\n`],
  ])('converts %s to the same rows', async (_name, file, text) => {
    expect(await convertText(file, text)).toEqual(compact);
  });
});

describe('properties DuckDB would not see in a sample', () => {
  it('keeps a property that first appears after 30,000 features, and one that turns from numbers to text', async () => {
    const input = join(dir, 'late.geojson');
    await writePoints(input, 40_000, (index) => ({
      n: index, ...(index >= 30_000 ? { late: index * 2 } : {}), code: index < 35_000 ? index : `code ${index}`,
    }));
    const result = await convertFile({ input, output: join(dir, 'late.parquet') });
    expect(result.rows).toBe(40_000);
    const columns = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${join(dir, 'late.parquet')}'))`);
    expect(Object.fromEntries(columns.map((column) => [column.column_name, column.column_type]))).toMatchObject({ n: 'BIGINT', late: 'BIGINT' });
    const [counts] = await query(`SELECT count(late)::INTEGER AS late, sum(late)::BIGINT AS total, count(code)::INTEGER AS code FROM read_parquet('${join(dir, 'late.parquet')}')`);
    expect(counts).toEqual({ late: 10_000, total: BigInt(2 * (30_000 + 39_999) * 10_000 / 2), code: 40_000 });
    const [text] = await query(`SELECT code::VARCHAR AS code FROM read_parquet('${join(dir, 'late.parquet')}') WHERE n = 39999`);
    expect(text!.code).toContain('code 39999');
  });

  it('keeps many sparse properties as columns, not one map', async () => {
    const input = join(dir, 'sparse.geojson');
    await writePoints(input, 2000, (index) => ({ n: index, [`tag_${index % 50}`]: index }));
    await convertFile({ input, output: join(dir, 'sparse.parquet') });
    const [row] = await query(`SELECT tag_7, tag_49 FROM read_parquet('${join(dir, 'sparse.parquet')}') WHERE n = 1707`);
    expect(row).toEqual({ tag_7: 1707n, tag_49: null });
  });
});

describe('a feature larger than DuckDB\'s 16 MB default', () => {
  it('converts a 20 MB line with its neighbours', async () => {
    const coordinates = Array.from({ length: 600_000 }, (_, index) => [-180 + (index % 35_000) / 100 + 0.123456789, -80 + (index % 15_000) / 100 + 0.987654321]);
    const big = { type: 'Feature', properties: { rank: 2 }, geometry: { type: 'LineString', coordinates } };
    const small = (rank: number) => ({ type: 'Feature', properties: { rank }, geometry: { type: 'Point', coordinates: [rank, rank] } });
    const text = [small(1), big, small(3)].map((feature) => JSON.stringify(feature)).join('\n');
    expect(text.length).toBeGreaterThan(20 << 20);
    await writeFile(join(dir, 'big.geojsonl'), text);
    const result = await convertFile({ input: join(dir, 'big.geojsonl'), output: join(dir, 'big.parquet') });
    expect(result.rows).toBe(3);
    const rows = await query(`SELECT rank, octet_length(st_asbinary(geometry))::INTEGER AS bytes FROM read_parquet('${join(dir, 'big.parquet')}') ORDER BY rank`);
    // WKB: a point is 21 bytes; a line 9, and 16 a vertex.
    expect(rows).toEqual([{ rank: 1n, bytes: 21 }, { rank: 2n, bytes: 9 + 16 * 600_000 }, { rank: 3n, bytes: 21 }]);
  }, 60_000);
});

describe('memory', () => {
  it('a GeoJSON file four times as large does not need twice the memory', async () => {
    const small = join(dir, 'memory-small.geojson');
    const large = join(dir, 'memory-large.geojson');
    const properties = (index: number) => ({ name: `place ${index}`, kind: ['town', 'village', 'city'][index % 3], population: index * 7 });
    await writePoints(small, 100_000, properties);
    await writePoints(large, 400_000, properties);
    const smallMb = await measurePeakMb(small);
    const largeMb = await measurePeakMb(large);
    console.log(`peak RSS converting 100,000 and 400,000 features: ${smallMb.toFixed(0)} and ${largeMb.toFixed(0)} MB`);
    expect(largeMb).toBeLessThan(smallMb * 2);
  }, 120_000);
});

describe('layers GDAL reads, written straight to disk', () => {
  it.each([
    ['a shapefile', MEGACITIES, null],
    ['a GeoPackage layer', US_BOUNDARIES, 'states'],
  ])('writes %s as the same GeoJSON as the inspector\'s in-memory export', async (_name, input, layer) => {
    const inMemory = join(dir, 'in-memory.geojson');
    const onDisk = join(dir, 'on-disk.geojson');
    expect(await streamLayerAsGeoJson(input, layer, onDisk)).toEqual(await writeLayerAsGeoJson(input, layer, inMemory));
    expect((await readFile(onDisk)).equals(await readFile(inMemory))).toBe(true);
  });

  it('converts every row of a GeoPackage whose feature ids have gaps', async () => {
    const gpkg = join(dir, 'gaps.gpkg');
    await copyFile(US_BOUNDARIES, gpkg);
    const database = new DatabaseSync(gpkg);
    database.exec('DELETE FROM states WHERE fid % 3 = 0 OR fid < 5');
    const kept = database.prepare('SELECT name FROM states ORDER BY name').all().map((row) => row.name);
    database.close();
    const result = await convertFile({ input: gpkg, layer: 'states', output: join(dir, 'gaps.parquet') });
    expect(result.rows).toBe(kept.length);
    const names = await query(`SELECT name FROM read_parquet('${join(dir, 'gaps.parquet')}') ORDER BY name`);
    expect(names.map((row) => row.name)).toEqual(kept);
  });
});

describe('GeoJSON that cannot be converted', () => {
  it.each([
    ['an array', 'array.geojson', '[{"type":"Feature"}]', 'it is not GeoJSON: it does not start with a JSON object'],
    ['an object without features', 'object.geojson', '{"name": "Paris", "meta": {"features": []}}', 'it is not a GeoJSON FeatureCollection (no "features" array of Feature objects)'],
    ['features that are not an array', 'null.geojson', '{"type": "FeatureCollection", "features": null}', 'it is not a GeoJSON FeatureCollection (its "features" is not an array of Feature objects)'],
    ['a feature that is not an object', 'number.geojson', '{"features": [{"type": "Feature", "geometry": null}, 7]}', 'it is not a GeoJSON FeatureCollection (its feature 2 is not a JSON object)'],
    ['no features', 'empty.geojson', '{"type": "FeatureCollection", "features": []}', 'it has no features'],
    ['a file cut short', 'cut.geojson', '{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": null}', 'it is not valid GeoJSON: it ends before its "features" array does'],
    ['a feature that is not JSON', 'broken.geojson', '{"features": [{"type": "Feature", "geometry": null}, {"type": "Feature" "geometry": null}]}', /^its feature 2 is not valid JSON \(/],
    ['a sequence of numbers', 'numbers.geojsonl', '{"type": "Feature", "geometry": null}\n12\n', 'it is not a GeoJSON sequence: its text 2 is not a JSON object'],
    ['features without geometry', 'no-geometry.geojsonl', '{"type": "Feature", "properties": {"a": 1}}\n', 'it is not GeoJSON: its features have no "geometry"'],
  ])('%s says why, naming the file', async (_name, file, text, message) => {
    await writeFile(join(dir, file), text);
    const error = await convertFile({ input: join(dir, file), output: join(dir, `${file}.parquet`) }).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConvertError);
    const why = (error as Error).message.replace(`${join(dir, file)}: `, '');
    if (typeof message === 'string') expect(why).toBe(message);
    else expect(why).toMatch(message);
  });
});
