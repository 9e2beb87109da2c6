import type { CollectionModel, DatasetModel } from '../../../core/model.ts';
import type { RenderContext } from '../../../core/api/catalog/resources.ts';
import { describeVersionChanges } from '../../../core/api/catalog/version-changes.ts';
import { collectionPath, datasetPath, filePath, SITE_PATHS } from '../../../core/site/paths.ts';
import type { TreeFile } from '../../../core/static-files.ts';
import type { VersionChanges } from '../../../schemas/version-changes.ts';
import { escapeXml } from '../xml.ts';
import type { Removal } from '../../model/removals.ts';

/** Key of the catalog's feed, and of a collection's; the media type of both. */
export const CATALOG_FEED_KEY = 'feed.atom';
export const ATOM_TYPE = 'application/atom+xml';

/** A feed lists the latest changes, not the whole history: readers poll it. */
const FEED_ENTRIES = 100;

/** Key of a collection's feed: beside its page. */
export function collectionFeedKey(collectionSlug: string): string {
  return `${collectionPath(collectionSlug).slice(1)}feed.atom`;
}

interface FeedEntry {
  id: string;
  title: string;
  link: string;
  published: string;
  updated: string;
  summary: string;
}

/** `/feed.atom`: the latest datasets and file versions added, updated or removed in the whole catalog (Atom, RFC 4287). */
export function renderCatalogFeed(context: RenderContext, removals: readonly Removal[] = []): TreeFile {
  const base = context.index.settings.baseUrl;
  const entries = context.index.model.collections.flatMap((collection) => listEntries(context, collection));
  entries.push(...listRemovalEntries(context, removals));
  return renderFeed({ id: `${base}${SITE_PATHS.home}`, title: 'geoshelf: changes to the catalog', self: `${base}/${CATALOG_FEED_KEY}`, page: `${base}${SITE_PATHS.home}`, key: CATALOG_FEED_KEY }, entries);
}

/** A collection's feed: the latest datasets and file versions added, updated or removed in it (`removals`: its own). */
export function renderCollectionFeed(context: RenderContext, collection: CollectionModel, removals: readonly Removal[] = []): TreeFile {
  const base = context.index.settings.baseUrl;
  const key = collectionFeedKey(collection.slug);
  const entries = [...listEntries(context, collection), ...listRemovalEntries(context, removals)];
  return renderFeed({ id: `${base}${collectionPath(collection.slug)}`, title: `geoshelf: changes to ${collection.name}`, self: `${base}/${key}`, page: `${base}${collectionPath(collection.slug)}`, key }, entries);
}

/** An entry before it is written: when it changed, and how to write it (only the latest are). */
interface PendingEntry {
  updated: string;
  make: () => FeedEntry;
}

/** One entry per dataset (added, or updated since) and one per stored version of each file, with what changed in it. */
function listEntries(context: RenderContext, collection: CollectionModel): PendingEntry[] {
  const base = context.index.settings.baseUrl;
  const entries: PendingEntry[] = [];
  for (const dataset of collection.datasets) {
    entries.push({ updated: dataset.updated_at, make: () => describeDataset(base, collection, dataset) });
    for (const file of dataset.files) {
      const versions = new Map<string, { created: string; updated: string }>();
      for (const link of file.formats) {
        for (const source of link.sources) {
          const seen = versions.get(source.version);
          versions.set(source.version, { created: seen && seen.created < source.created_at ? seen.created : source.created_at, updated: seen && seen.updated > source.updated_at ? seen.updated : source.updated_at });
        }
      }
      for (const [version, times] of versions) {
        entries.push({
          updated: times.updated,
          make: () => {
            const page = `${base}${filePath(collection.slug, dataset.slug, file.slug)}`;
            const change = describeVersionChanges(file, context.index).find((candidate) => candidate.version === version);
            return { id: `${page}#version-${encodeURIComponent(version)}`, title: `${dataset.name}: ${file.name}, version ${version}`, link: page, published: times.created, updated: times.updated, summary: summarizeChanges(version, change) };
          },
        });
      }
    }
  }
  return entries;
}

/**
 * One entry per removal. Its page is gone, so the entry links to the nearest page still there, and its id is that of
 * the removal, not of the page: a feed reader shows it as news, not as an edit of the entry that announced it.
 */
function listRemovalEntries(context: RenderContext, removals: readonly Removal[]): PendingEntry[] {
  const base = context.index.settings.baseUrl;
  const { index } = context;
  return removals.map((removal) => ({
    updated: removal.removed_at,
    make: () => {
      const [collection = '', dataset = '', file = ''] = removal.key.replace(/@.*$/s, '').split('/');
      const pages = [
        [SITE_PATHS.home, true],
        [collectionPath(collection), index.collections.has(collection)],
        [datasetPath(collection, dataset), index.collections.get(collection)?.datasetsBySlug.has(dataset) ?? false],
        [filePath(collection, dataset, file), index.collections.get(collection)?.datasetsBySlug.get(dataset)?.files.some((candidate) => candidate.slug === file) ?? false],
      ] as const;
      // The page the removed thing had (a version's is its file's), and the nearest one up that is still there.
      const own = { collection: 1, dataset: 2, file: 3, version: 3 }[removal.kind];
      const nearest = pages.slice(0, own + 1).findLast(([, exists]) => exists)![0];
      const { title, summary } = describeRemoval(removal);
      const version = removal.kind === 'version' ? `version-${encodeURIComponent(removal.key.slice(removal.key.indexOf('@') + 1))}-` : '';
      return { id: `${base}${pages[own]![0]}#${version}removed-${removal.removed_at}`, title, link: `${base}${nearest}`, published: removal.removed_at, updated: removal.removed_at, summary };
    },
  }));
}

function describeRemoval(removal: Removal): { title: string; summary: string } {
  const parts = removal.key.split('/');
  const kept = removal.id === undefined ? '' : ` Its id, ${removal.id}, is not given to anything else.`;
  switch (removal.kind) {
    case 'collection':
      return { title: `Collection ${removal.key} removed`, summary: `The collection ${removal.key} and its datasets were removed from the catalog.${kept}` };
    case 'dataset':
      return { title: `Dataset ${removal.key} removed`, summary: `The dataset ${parts[1]} and its files were removed from the collection ${parts[0]}.${kept}` };
    case 'file':
      return { title: `File ${removal.key} removed`, summary: `The file ${parts[2]} and its versions were removed from the dataset ${parts[0]}/${parts[1]}.${kept}` };
    case 'version': {
      const at = removal.key.indexOf('@');
      return { title: `${removal.key.slice(0, at)}: version ${removal.key.slice(at + 1)} removed`, summary: `Version ${removal.key.slice(at + 1)} of the file ${removal.key.slice(0, at)} was removed, in every format.` };
    }
  }
}

function describeDataset(base: string, collection: CollectionModel, dataset: DatasetModel): FeedEntry {
  const page = `${base}${datasetPath(collection.slug, dataset.slug)}`;
  const files = dataset.files.length === 1 ? 'one file' : `${dataset.files.length} files`;
  return {
    id: page,
    title: dataset.name,
    link: page,
    published: dataset.created_at,
    updated: dataset.updated_at,
    summary: `${dataset.updated_at > dataset.created_at ? 'Updated' : 'Added'} in ${collection.name}, with ${files}.${dataset.description ? ` ${dataset.description}` : ''}`,
  };
}

/** One line of what a version changed, or that it is the first. */
function summarizeChanges(version: string, change: VersionChanges | undefined): string {
  if (!change) return `Version ${version}.`;
  const parts = [
    change.columns.added.length > 0 ? `columns added: ${change.columns.added.map((column) => column.name).join(', ')}` : '',
    change.columns.removed.length > 0 ? `columns removed: ${change.columns.removed.map((column) => column.name).join(', ')}` : '',
    change.columns.retyped.length > 0 ? `columns retyped: ${change.columns.retyped.map((column) => `${column.name} ${column.from} → ${column.to}`).join(', ')}` : '',
    change.row_count ? `rows ${change.row_count.from ?? '?'} → ${change.row_count.to ?? '?'}` : '',
    change.bounds ? 'bounds changed' : '',
    change.invalid_geometry_count ? `invalid geometries ${change.invalid_geometry_count.from ?? '?'} → ${change.invalid_geometry_count.to ?? '?'}` : '',
    change.statistics.length > 0 ? `${change.statistics.length} statistics moved` : '',
  ].filter(Boolean);
  return `Version ${version} against ${change.previous}: ${parts.length > 0 ? parts.join('; ') : 'no change in columns, rows, bounds, validity or statistics'}.`;
}

/** A feed of the latest entries, newest first; entries changed at the same time keep the catalog's order. */
function renderFeed(feed: { id: string; title: string; self: string; page: string; key: string }, all: PendingEntry[]): TreeFile {
  const entries = all.sort((a, b) => (a.updated < b.updated ? 1 : a.updated > b.updated ? -1 : 0)).slice(0, FEED_ENTRIES).map((entry) => entry.make());
  const updated = entries[0]?.updated ?? '1970-01-01T00:00:00';
  const xml = [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  <id>${escapeXml(feed.id)}</id>`,
    `  <title>${escapeXml(feed.title)}</title>`,
    `  <updated>${updated}Z</updated>`,
    '  <author><name>geoshelf</name></author>',
    `  <link rel="self" type="${ATOM_TYPE}" href="${escapeXml(feed.self)}"/>`,
    `  <link rel="alternate" type="text/html" href="${escapeXml(feed.page)}"/>`,
    ...entries.map((entry) => [
      '  <entry>',
      `    <id>${escapeXml(entry.id)}</id>`,
      `    <title>${escapeXml(entry.title)}</title>`,
      `    <link rel="alternate" type="text/html" href="${escapeXml(entry.link)}"/>`,
      `    <published>${entry.published}Z</published>`,
      `    <updated>${entry.updated}Z</updated>`,
      `    <summary>${escapeXml(entry.summary)}</summary>`,
      '  </entry>',
    ].join('\n')),
    '</feed>',
    '',
  ].join('\n');
  return { key: feed.key, body: new TextEncoder().encode(xml), type: ATOM_TYPE };
}
