import { describe, expect, it } from 'vitest';
import { buildExcerpt } from '../core/search/excerpt.ts';
import { SEARCH_FILES, type SearchChunk, type SearchDocument, type SearchMeta } from '../core/search/format.ts';
import { listQueryChunks, prepareMeta, rankDocuments } from '../core/search/rank.ts';
import { filterTerm, parseQuery } from '../core/search/terms.ts';
import type { TreeFile } from '../core/static-files.ts';
import { buildSearchIndex, digestSearchRecords, SEARCH_INDEX_PREFIX, type SearchRecord } from '../generator/emit/site/search-index.ts';

const RECORDS: SearchRecord[] = [
  {
    id: 11,
    url: '/collections/natural-earth/datasets/countries/',
    title: 'Countries of the world',
    collection: 'Natural Earth',
    description: 'Country polygons with population estimates, drawn at 1:110m.',
    tags: ['boundaries', 'administrative'],
    columns: ['iso_a3', 'pop_est', 'geometry'],
    files: ['countries-110m'],
  },
  {
    id: 12,
    url: '/collections/geonames/datasets/cities/',
    title: 'Cities and towns of the world',
    collection: 'GeoNames',
    description: 'Populated places with more than 1,000 inhabitants, from São Paulo to Reykjavík.',
    tags: ['population'],
    columns: ['name', 'feature_code', 'admin_code', 'geometry'],
    files: ['cities-1000'],
  },
  {
    id: 13,
    url: '/collections/natural-earth/datasets/land/',
    title: 'Land polygons',
    collection: 'Natural Earth',
    description: 'Land of the world split at the antimeridian, for maps of every country.',
    tags: ['physical'],
    columns: ['featurecla', 'geometry'],
    files: ['land-110m'],
  },
  {
    id: 14,
    url: '/collections/us-census/datasets/states/',
    title: 'US states',
    collection: 'US Census',
    description: '',
    tags: [],
    columns: [],
    files: [],
  },
];

const decoder = new TextDecoder();

/** Searches built files as the search page does: the metadata, the chunks the query names, then each result's file. */
function searchFiles(files: TreeFile[], text: string, filters: { collection?: string; tag?: string } = {}) {
  const byKey = new Map(files.map((file) => [file.key, file.body]));
  const read = <T>(path: string): T => {
    const body = byKey.get(`${SEARCH_INDEX_PREFIX}${path}`);
    if (!body) throw new Error(`no file ${path}`);
    return JSON.parse(decoder.decode(body)) as T;
  };
  const meta = prepareMeta(read<SearchMeta>(SEARCH_FILES.meta));
  const query = {
    words: parseQuery(text),
    filters: [filters.collection && filterTerm('collection', filters.collection), filters.tag && filterTerm('tag', filters.tag)].filter((term): term is string => Boolean(term)),
  };
  const keys = listQueryChunks(meta, query);
  const chunks = new Map(keys.map((key) => [key, read<SearchChunk>(SEARCH_FILES.chunk(key))]));
  return rankDocuments(meta, query, chunks).map((hit) => {
    const document = read<SearchDocument>(SEARCH_FILES.document(hit.id));
    return { title: document.title, description: document.description, excerpt: buildExcerpt(document, query.words) };
  });
}

const titles = (files: TreeFile[], query: string, filters?: { collection?: string; tag?: string }) => searchFiles(files, query, filters).map((hit) => hit.title);

function changedKeys(before: TreeFile[], after: TreeFile[]): string[] {
  const old = new Map(before.map((file) => [file.key, decoder.decode(file.body)]));
  const now = new Map(after.map((file) => [file.key, decoder.decode(file.body)]));
  const keys = new Set([...old.keys(), ...now.keys()]);
  return [...keys].filter((key) => old.get(key) !== now.get(key)).sort();
}

describe('the search index', async () => {
  const files = await buildSearchIndex(RECORDS);

  it('is JSON files under _site/search/, so the static tree compresses them', () => {
    expect(files.some((file) => file.key === '_site/search/meta.json')).toBe(true);
    expect(files.every((file) => file.key.startsWith('_site/search/') && file.type === 'application/json')).toBe(true);
  });

  it.each([
    ['a whole column name', 'feature_code', ['Cities and towns of the world']],
    ['a part of a column name', 'code', ['Cities and towns of the world']],
    ['a word of a description', 'antimeridian', ['Land polygons']],
    ['a tag', 'physical', ['Land polygons']],
    ['a collection name', 'census', ['US states']],
    ['a file name', '110m', ['Countries of the world', 'Land polygons']],
  ])('finds a dataset by %s', (_what, query, expected) => {
    expect(titles(files, query).toSorted()).toEqual(expected);
  });

  it('ranks a title match above a description match', () => {
    expect(titles(files, 'world')).toHaveLength(3);
    expect(titles(files, 'world')[2]).toBe('Land polygons');
  });

  it('ranks a whole word above longer words that start with it', async () => {
    const rivers = await buildSearchIndex([
      { id: 1, url: '/a/', title: 'A', collection: 'C', description: 'The riverside paths of the town.', tags: [], columns: [], files: [] },
      { id: 2, url: '/b/', title: 'B', collection: 'C', description: 'The river paths of the town.', tags: [], columns: [], files: [] },
    ]);
    expect(titles(rivers, 'river')).toEqual(['B', 'A']);
    expect(titles(rivers, 'river ')).toEqual(['B', 'A']);
  });

  it('shows only datasets that match every word', () => {
    expect(titles(files, 'world land')).toEqual(['Land polygons']);
    expect(titles(files, 'world census')).toEqual([]);
  });

  it('folds accents and case', () => {
    expect(titles(files, 'SAO PAULO')).toEqual(['Cities and towns of the world']);
    expect(titles(files, 'reykjavík')).toEqual(['Cities and towns of the world']);
  });

  it('matches the last word as the start of a longer word, and a finished word above its longer forms', () => {
    expect(titles(files, 'world antimer')).toEqual(['Land polygons']);
    expect(titles(files, 'popul')).toEqual(['Cities and towns of the world', 'Countries of the world']);
  });

  it('matches a one-letter word only as a whole word', () => {
    expect(titles(files, 'u')).toEqual([]);
    expect(titles(files, 'states u')).toEqual([]);
    expect(titles(files, 'us')).toEqual(['US states']);
  });

  it('keeps only the datasets of a collection or tag filter', () => {
    expect(titles(files, 'world', { collection: 'natural earth' })).toEqual(['Countries of the world', 'Land polygons']);
    expect(titles(files, 'world', { tag: 'Population' })).toEqual(['Cities and towns of the world']);
  });

  it('cuts an excerpt around the first match and marks every matched word', () => {
    const [hit] = searchFiles(files, 'antimeridian maps');
    expect(hit!.excerpt.filter((part) => part.marked).map((part) => part.text)).toEqual(['antimeridian', 'maps']);
    expect(hit!.excerpt.map((part) => part.text).join('')).toContain('split at the antimeridian, for maps');
  });

  it('shows a matched column name in the excerpt when the description has no match', () => {
    const [hit] = searchFiles(files, 'feature_code');
    expect(hit!.excerpt.find((part) => part.marked)?.text).toBe('feature_code');
  });

  it('keeps markup in a description as text', () => {
    const excerpt = buildExcerpt({ ...RECORDS[0]!, description: 'Rivers <img src=x onerror=alert(1)> of Europe' }, parseQuery('rivers'));
    expect(excerpt).toEqual([{ text: 'Rivers', marked: true }, { text: ' <img src=x onerror=alert(1)> of Europe\nColumns: iso_a3 · pop_est · geometry — Files: countries-110m — Tags: boundaries · administrative', marked: false }]);
  });

  it('gives the same bytes for the same datasets in any order', async () => {
    expect(changedKeys(files, await buildSearchIndex(RECORDS.toReversed()))).toEqual([]);
  });

  it('rewrites only the chunks of the words an edit adds or removes, the dataset\'s own file and the metadata', async () => {
    const edited = RECORDS.map((record) => (record.id === 13 ? { ...record, description: record.description.replace('antimeridian', 'dateline') } : record));
    const after = await buildSearchIndex(edited);
    const changed = changedKeys(files, after);
    expect(changed).toContain('_site/search/d/13.json');
    expect(changed).toContain('_site/search/meta.json');
    expect(changed.length).toBeLessThanOrEqual(4);
    expect(titles(after, 'dateline')).toEqual(['Land polygons']);
    expect(titles(after, 'antimeridian')).toEqual([]);
  });

  it('keeps the files of other datasets when one is added or removed', async () => {
    const added = await buildSearchIndex([...RECORDS, { id: 15, url: '/collections/x/datasets/y/', title: 'Rivers', collection: 'X', description: 'Rivers.', tags: [], columns: [], files: [] }]);
    const removed = await buildSearchIndex(RECORDS.filter((record) => record.id !== 12));
    for (const changed of [changedKeys(files, added), changedKeys(files, removed)]) {
      expect(changed.filter((key) => key.includes('/d/'))).toHaveLength(1);
    }
  });

  it('fingerprints the records the same way in any order, and differently after an edit', () => {
    expect(digestSearchRecords(RECORDS.toReversed())).toBe(digestSearchRecords(RECORDS));
    expect(digestSearchRecords([{ ...RECORDS[0]!, columns: ['iso_a2'] }, ...RECORDS.slice(1)])).not.toBe(digestSearchRecords(RECORDS));
  });
});

describe('a search index too large for one chunk', async () => {
  // Made-up words from a few syllables, so that many words share prefixes and the index splits deep.
  const SYLLABLES = ['ka', 'ri', 'mo', 'lu', 'sen', 'ta', 'vo', 'ne'];
  const wordOf = (n: number) => `${SYLLABLES[n % 8]}${SYLLABLES[(n >> 3) % 8]}${SYLLABLES[(n >> 6) % 8]}${n % 7 === 0 ? '' : SYLLABLES[(n >> 9) % 8]}`;
  const records: SearchRecord[] = Array.from({ length: 2000 }, (_, d) => ({
    id: d + 1,
    url: `/collections/c/datasets/d${d}/`,
    title: `Dataset ${d}`,
    collection: 'C',
    description: Array.from({ length: 30 }, (_, w) => wordOf((d * 131 + w * 977) % 4096)).join(' '),
    tags: [],
    columns: [`${wordOf(d % 300)}_value`],
    files: [],
  }));
  const files = await buildSearchIndex(records);
  const count = (query: string) => searchFiles(files, query).length;
  const expected = (test: (word: string) => boolean) => records.filter((record) => `${record.description} ${record.columns[0]}`.split(/[ _]/).some(test)).length;

  it('splits its words into many chunks', () => {
    expect(files.filter((file) => file.key.includes('/t/')).length).toBeGreaterThan(20);
  });

  it.each(['ka', 'kari', 'karimo', 'karimolu', 'vonesen', 'senta', 'ne'])('finds every dataset with a word that starts with “%s”', (prefix) => {
    expect(count(prefix)).toBe(expected((word) => word.startsWith(prefix)));
    expect(count(prefix)).toBeGreaterThan(0);
  });

  it.each([2184, 539, 3003].map(wordOf))('finds every dataset with the whole word “%s” when a space follows it, those with the word itself first', (word) => {
    expect(searchFiles(files, `${word} `).length).toBe(expected((candidate) => candidate.startsWith(word)));
    expect(searchFiles(files, `${word} `)[0]!.description.split(' ')).toContain(word);
  });

  it('rewrites a few of its chunks when one description changes', async () => {
    const edited = records.map((record) => (record.id === 500 ? { ...record, description: `${record.description} zyzzyva` } : record));
    const changed = changedKeys(files, await buildSearchIndex(edited));
    expect(changed).toEqual(['_site/search/d/500.json', '_site/search/meta.json', expect.stringMatching(/^_site\/search\/t\/z?\.json$|^_site\/search\/t\/-\.json$/)]);
  });
});
