import type { QueryBounds, QueryResult } from '../../../schemas/query.ts';
import type { McpToolName } from './tools.ts';

/**
 * The short text of each tool's answer, beside its structuredContent, for clients that read text only: what an
 * agent needs for its next call (slugs, ids, offsets), never the whole document.
 */

/** Rows shown in the text rendering of a query page; the structured content has them all. */
const TEXT_ROWS = 5;

type Document = Record<string, unknown>;

function renderCollections(value: Document): string {
  const lines = (value.collections as { slug: string; id: number; name: string; dataset_count?: number }[])
    .map((collection) => `- ${collection.slug} (id ${collection.id}): ${collection.name}, ${collection.dataset_count ?? 0} datasets`);
  return [`${lines.length} collections:`, ...lines].join('\n');
}

function renderTags(value: Document): string {
  const tags = value.tags as Record<string, string[]>;
  return Object.entries(tags).map(([key, values]) => `${key}: ${values.join(', ')}`).join('\n') || 'No tags.';
}

function renderListing(value: Document): string {
  const page = value as {
    collection?: { slug: string };
    datasets: { slug: string; id: number; name: string; collection_slug?: string }[];
    total: number;
    offset: number;
  };
  const where = page.collection ? `in collection ${page.collection.slug}` : 'across every collection';
  const end = page.offset + page.datasets.length;
  const head = page.datasets.length === 0
    ? `No datasets on this page ${where} (${page.total} match).`
    : `Datasets ${page.offset + 1}–${end} of ${page.total} ${where}:`;
  const more = end < page.total ? [`More: offset ${end}.`] : [];
  const line = (dataset: (typeof page.datasets)[number]) => `- ${dataset.collection_slug ? `${dataset.collection_slug}/` : ''}${dataset.slug} (id ${dataset.id}): ${dataset.name}`;
  return [head, ...page.datasets.map(line), ...more].join('\n');
}

interface SourceSummary { id: number; version?: string | number; url?: string | null }
interface FileSummary { id: number; slug: string; name: string; formats?: { format: { name: string }; sources: SourceSummary[] }[] }

/** The ids an agent needs for run_query, one line per file and source. */
function renderDataset(value: Document): string {
  const { collection, dataset } = value as { collection: { id: number; slug: string }; dataset: { id: number; slug: string; name: string; files?: FileSummary[] } };
  const lines = [`${dataset.name}: collection_id ${collection.id}, dataset_id ${dataset.id} (${collection.slug}/${dataset.slug}).`];
  for (const file of dataset.files ?? []) {
    lines.push(`- file ${file.slug}, file_id ${file.id}: ${file.name}`);
    for (const format of file.formats ?? []) {
      for (const source of format.sources) lines.push(`  - ${format.format.name} version ${source.version ?? '?'}: file_source_id ${source.id}${source.url ? `, ${source.url}` : ''}`);
    }
  }
  return lines.join('\n');
}

function renderFile(value: Document): string {
  const { file, dictionary } = value as { file: { slug: string; name: string }; dictionary: { selected_version: string | number | null; schema: { columns: { name: string; type: string }[] } | null } };
  if (!dictionary.schema) return `${file.name} (${file.slug}): no schema-capable source, so no data dictionary.`;
  const columns = dictionary.schema.columns.map((column) => `${column.name} ${column.type}`).join(', ');
  return `${file.name} (${file.slug}), version ${dictionary.selected_version}: ${dictionary.schema.columns.length} columns: ${columns}.`;
}

function renderSource(value: Document): string {
  const source = value as { id: number; version: string; url?: string | null; links: { download_zip: string } };
  return `Source ${source.id}, version ${source.version}: ${source.url ?? 'no direct download'}; every file in one archive: ${source.links.download_zip}`;
}

function renderPage(value: Document): string {
  const page = value as QueryResult;
  const head = `${page.returned_count} rows from offset ${page.offset}${page.has_more ? `; more from offset ${page.next_offset}` : '; no more rows'}. query_id ${page.query_id}.`;
  const columns = `Columns: ${page.columns.map((column) => `${column.name} ${column.type}`).join(', ')}.`;
  const rows = page.rows.slice(0, TEXT_ROWS).map((row) => JSON.stringify(row, (_key, item) => (typeof item === 'string' && item.length > 80 ? `${item.slice(0, 80)}…` : item)));
  return [head, columns, ...rows, ...(page.rows.length > TEXT_ROWS ? [`(${page.rows.length - TEXT_ROWS} more rows in the structured content)`] : [])].join('\n');
}

function renderBounds(value: Document): string {
  const [west, south, east, north] = (value as QueryBounds).bounds;
  return `WGS84 extent: west ${west}, south ${south}, east ${east}, north ${north}${west > east ? ' (crosses the antimeridian)' : ''}.`;
}

/** The text rendering of each tool's answer. */
export const TOOL_TEXT: Record<McpToolName, (value: Document) => string> = {
  list_collections: renderCollections,
  list_tags: renderTags,
  search_datasets: renderListing,
  get_dataset: renderDataset,
  get_file: renderFile,
  get_source: renderSource,
  run_query: renderPage,
  get_query_page: renderPage,
  get_query_bounds: renderBounds,
};
