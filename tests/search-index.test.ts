import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TreeFile } from '../core/static-files.ts';
import { buildSearchIndex, closeSearchIndexer, digestSearchRecords, type SearchRecord } from '../generator/emit/site/search-index.ts';

const RECORDS: SearchRecord[] = [
  {
    url: '/collections/natural-earth/datasets/countries/',
    title: 'Countries of the world',
    collection: 'Natural Earth',
    description: 'Country polygons with population estimates, drawn at 1:110m.',
    tags: ['boundaries', 'administrative'],
    columns: ['iso_a3', 'pop_est', 'geometry'],
    files: ['countries-110m'],
  },
  {
    url: '/collections/geonames/datasets/megacities/',
    title: 'Megacities',
    collection: 'GeoNames',
    description: 'Cities with more than ten million inhabitants.',
    tags: ['population'],
    columns: ['name', 'population', 'geom'],
    files: ['megacities'],
  },
  {
    url: '/collections/us-census/datasets/states/',
    title: 'US states',
    collection: 'US Census',
    description: '',
    tags: [],
    columns: [],
    files: [],
  },
];

/** The JSON inside a Pagefind file: gzip, then a 12-byte signature. */
function readPagefindJson(file: TreeFile): unknown {
  const bytes = gunzipSync(file.body);
  expect(new TextDecoder().decode(bytes.subarray(0, 12))).toBe('pagefind_dcd');
  return JSON.parse(new TextDecoder().decode(bytes.subarray(12)));
}

function byKey(files: TreeFile[]): Map<string, Uint8Array> {
  return new Map(files.map((file) => [file.key, file.body]));
}

describe('the search index', () => {
  let files: TreeFile[];
  beforeAll(async () => {
    files = await buildSearchIndex(RECORDS);
  });
  afterAll(() => closeSearchIndexer());

  it('puts every file under _site/pagefind/', () => {
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((file) => file.key.startsWith('_site/pagefind/'))).toBe(true);
  });

  it.each([
    ['_site/pagefind/pagefind.js', 'text/javascript'],
    ['_site/pagefind/pagefind-entry.json', 'application/json'],
    ['_site/pagefind/wasm.en.pagefind', 'application/octet-stream'],
  ])('ships %s as %s', (key, type) => {
    const file = files.find((candidate) => candidate.key === key);
    expect(file?.type.split(';')[0]).toBe(type);
    expect(file?.body.byteLength).toBeGreaterThan(0);
  });

  it('serves the index chunks, metadata and fragments as binary data', () => {
    const binary = files.filter((file) => /\.pf_(meta|index|fragment|filter)$/.test(file.key));
    expect(binary.length).toBeGreaterThanOrEqual(RECORDS.length + 2);
    expect(new Set(binary.map((file) => file.type))).toEqual(new Set(['application/octet-stream']));
  });

  it('counts every dataset in its entry file', () => {
    const entry = files.find((file) => file.key.endsWith('pagefind-entry.json'))!;
    const parsed = JSON.parse(new TextDecoder().decode(entry.body)) as { languages: Record<string, { page_count: number }> };
    expect(parsed.languages['en']?.page_count).toBe(RECORDS.length);
  });

  it('leaves out the ready-made search UIs and the worker the site does not load', () => {
    expect(files.filter((file) => /pagefind-(ui|modular-ui|component-ui|highlight|worker)\./.test(file.key))).toEqual([]);
  });

  it('stores with each dataset the title, collection and tags a result shows, and its columns in the excerpt text', () => {
    const fragments = files.filter((file) => file.key.endsWith('.pf_fragment')).map((file) => readPagefindJson(file) as { url: string; content: string; meta: Record<string, string> });
    const countries = fragments.find((fragment) => fragment.url === RECORDS[0]!.url);
    expect(countries?.meta).toEqual({ title: 'Countries of the world', collection: 'Natural Earth', tags: 'boundaries\nadministrative' });
    expect(countries?.content).toContain('pop_est');
    expect(fragments.find((fragment) => fragment.url === RECORDS[2]!.url)?.meta['title']).toBe('US states');
  });

  it('gives the same bytes for the same datasets in any order', async () => {
    const again = await buildSearchIndex(RECORDS.toReversed());
    expect(again.map((file) => file.key)).toEqual(files.map((file) => file.key));
    const before = byKey(files);
    expect(again.filter((file) => !Buffer.from(file.body).equals(before.get(file.key)!))).toEqual([]);
  });

  it('fingerprints the records the same way in any order, and differently after an edit', () => {
    expect(digestSearchRecords(RECORDS.toReversed())).toBe(digestSearchRecords(RECORDS));
    expect(digestSearchRecords([{ ...RECORDS[0]!, columns: ['iso_a2'] }, ...RECORDS.slice(1)])).not.toBe(digestSearchRecords(RECORDS));
  });

  it('keeps the fragments of untouched datasets when one description changes', async () => {
    const edited = RECORDS.map((record, index) => (index === 1 ? { ...record, description: 'Cities of more than ten million people.' } : record));
    const after = byKey(await buildSearchIndex(edited));
    const fragments = (map: Map<string, Uint8Array>) => [...map.keys()].filter((key) => key.endsWith('.pf_fragment'));
    const kept = fragments(byKey(files)).filter((key) => after.has(key));
    expect(kept).toHaveLength(RECORDS.length - 1);
  });
});
