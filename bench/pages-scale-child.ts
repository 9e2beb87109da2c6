/**
 * The weight of the web app's catalog-wide files at one catalog size, for `npm run bench -- pages-scale`: loads a
 * synthetic catalog as a build does, renders the global pages, the first page of one collection and the full-text
 * index, and prints the size of each, whole and with brotli (the build's quality), as one JSON line. It also
 * prints what the SQL console's dataset picker fetches for a query, as src/client/console/source-catalog.ts
 * fetches it: the index's metadata, the chunks of the query's words, and the files of the first 20 matches.
 * @example node --max-old-space-size=16000 bench/pages-scale-child.ts /tmp/catalog
 */
import { brotliCompressSync, constants } from 'node:zlib';
import { join } from 'node:path';
import { COMPRESSION, loadCatalogModel } from '../generator/build.ts';
import { createCatalogIndex } from '../core/catalog-index.ts';
import type { TreeFile } from '../core/static-files.ts';
import { prepareSite } from '../generator/emit/site/build-site.ts';
import { SEARCH_INDEX_PREFIX } from '../generator/emit/site/search-index.ts';
import { SEARCH_FILES, type SearchChunk, type SearchMeta } from '../core/search/format.ts';
import { listQueryChunks, prepareMeta, rankDocuments } from '../core/search/rank.ts';
import { parseQuery } from '../core/search/terms.ts';
import { benchConfig } from './build-bench.ts';

const [catalogDir] = process.argv.slice(2) as [string];
const repo = join(import.meta.dirname, '..');
const config = benchConfig(join(catalogDir, '..'), catalogDir, join(repo, 'catalog-data', 'data'));
const { model } = await loadCatalogModel({ config });
const index = createCatalogIndex(model, { baseUrl: config.baseUrl, storageBaseUrl: config.storageBaseUrl });
const site = await prepareSite(index, { root: repo, queryOrigin: '', browserSqlLimitBytes: 50e6 });
const brotli = (body: Uint8Array) => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: COMPRESSION.brotliQuality } }).length;
const sizes: Record<string, { bytes: number; br: number }> = {};
const measure = (files: TreeFile[], wanted: (key: string) => boolean) => {
  for (const file of files.filter((candidate) => wanted(candidate.key))) sizes[file.key] = { bytes: file.body.length, br: brotli(file.body) };
};
const global = site.scopes.global();
measure([...global.files, ...(await global.later!())], (key) => ['index.html', 'search/index.html', 'console/index.html'].includes(key));
const first = index.collections.values().next().value!;
measure(await site.scopes.collection(first).later!(), (key) => /^collections\/[^/]+\/index\.html$/.test(key));
const search = await site.scopes.search.extras().later!();
measure(search, (key) => key.endsWith('/meta.json'));
const chunks = search.filter((file) => file.key.includes('/t/')).map((file) => brotli(file.body)).sort((a, b) => a - b);
const byKey = new Map(search.map((file) => [file.key.slice(SEARCH_INDEX_PREFIX.length), file.body]));
const text = (path: string) => new TextDecoder().decode(byKey.get(path)!);
const meta = prepareMeta(JSON.parse(text(SEARCH_FILES.meta)) as SearchMeta);
// The picker's queries: the first word of the name of a dataset in the middle of the catalog, then that word with
// the first 3 letters of the name's last word.
const words = [...index.datasetsById.values()][Math.floor(index.datasetsById.size / 2)]!.dataset.name.split(/\s+/);
const [one, two] = [words[0]!, words.at(-1)!];
const picker = (query: string) => {
  const parsed = { words: parseQuery(query), filters: [] };
  const keys = listQueryChunks(meta, parsed);
  const loaded = new Map(keys.map((key) => [key, JSON.parse(text(SEARCH_FILES.chunk(key))) as SearchChunk]));
  const hits = rankDocuments(meta, parsed, loaded);
  const files = [SEARCH_FILES.meta, ...keys.map((key) => SEARCH_FILES.chunk(key)), ...hits.slice(0, 20).map((hit) => SEARCH_FILES.document(hit.id))];
  return { query, matches: hits.length, files: files.length, br: files.reduce((sum, path) => sum + brotli(byKey.get(path)!), 0) };
};
console.log(JSON.stringify({ datasets: index.datasetsById.size, sizes, chunks: { count: chunks.length, median: chunks[Math.floor(chunks.length / 2)], max: chunks.at(-1) }, picker: [picker(one), picker(`${one} ${two.slice(0, 3)}`)] }));
