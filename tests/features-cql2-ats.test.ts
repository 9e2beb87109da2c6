import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { makeTempCatalog, ROOT } from './helpers/catalog.ts';
import { writeGeoPackageTable } from './helpers/cql2-data.ts';

const FIXTURES = join(ROOT, 'tests/fixtures/cql2');
/** The layers of the standard's test data, by the name its tables give them, and the file slug each gets here. */
const LAYERS: Record<string, string> = { ne_110m_admin_0_countries: 'countries', ne_110m_populated_places_simple: 'places', ne_110m_rivers_lake_centerlines: 'rivers' };

/** Every row of the abstract test suite's tables: a layer, a predicate (CQL2 text) and how many features it selects. */
const ROWS = readdirSync(join(FIXTURES, 'ats')).flatMap((file) => readFileSync(join(FIXTURES, 'ats', file), 'utf8').split('\n').flatMap((line) => {
  const match = /^\|(ne_110m_\w+) \|`(.+)` \|(\d+)\s*$/.exec(line);
  // AsciiDoc escapes `((` and `<=` in the tables: the predicates are the text after unescaping.
  return match ? [{ file: file.replace(/^annex_ats_|\.adoc$/g, ''), layer: match[1]!, predicate: match[2]!.replaceAll('\\(', '(').replaceAll('\\<', '<'), count: Number(match[3]) }] : [];
}));

let server: GeoshelfServer;

beforeAll(async () => {
  const file = (slug: string) => [`  - slug: ${slug}`, `    name: ${slug}`, '    formats:', '      - format: geoparquet', '        sources:', '          - version: "1"', `            path: ${slug}.parquet`].join('\n');
  const { config, dataDir } = await makeTempCatalog({
    'formats.yaml': await readFile(join(ROOT, 'catalog-data/formats.yaml'), 'utf8'),
    'datasets/ne.yaml': ['slug: ne', 'collection: maps', 'name: CQL2 test data', 'files:', ...Object.values(LAYERS).map(file), ''].join('\n'),
  });
  for (const [table, slug] of Object.entries(LAYERS)) await writeGeoPackageTable(join(FIXTURES, 'data/ne110m4cql2.gpkg'), table, join(dataDir, `${slug}.parquet`));
  await buildCatalog({ config });
  server = createServer({ config });
}, 300_000);
afterAll(() => server?.close());

describe('the CQL2 abstract test suite\'s tables, on its own test data through /features', () => {
  it('has the rows of six conformance classes', () => {
    expect(new Set(ROWS.map((row) => row.file)).size).toBe(6);
    expect(ROWS.length).toBeGreaterThan(130);
  });

  it.each(ROWS.map((row) => [row.file, row.predicate, row.layer, row.count] as const))('%s: %s on %s selects %i', async (_file, predicate, layer, count) => {
    const response = await server.fetch(new Request(`http://localhost/features/collections/maps.ne.${LAYERS[layer]}/items?limit=1&filter=${encodeURIComponent(predicate)}`));
    const body = await response.json() as { numberMatched?: number; description?: string };
    expect(response.status, body.description).toBe(200);
    expect(body.numberMatched).toBe(count);
  });
});
