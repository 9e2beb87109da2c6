import type { z } from 'zod';
import type { CollectionDatasetsPageSchema, CollectionListSchema, TagsResponseSchema } from '../schemas/listing.ts';
import type { DatasetDetailResponseSchema, DatasetFileResponseSchema, DatasetFileSchemaResponseSchema } from '../schemas/detail.ts';
import type { DatasetStatsSchema } from '../schemas/datasets.ts';

/** The API documents a page is rendered from: pages show these, so HTML and JSON cannot drift. */
export type CollectionListDoc = z.infer<typeof CollectionListSchema>;
export type CollectionPageDoc = z.infer<typeof CollectionDatasetsPageSchema>;
export type TagsDoc = z.infer<typeof TagsResponseSchema>;
export type DatasetDetailDoc = z.infer<typeof DatasetDetailResponseSchema>;
export type FileDoc = z.infer<typeof DatasetFileResponseSchema>;
export type SchemaDoc = z.infer<typeof DatasetFileSchemaResponseSchema>;
export type StatsDoc = z.infer<typeof DatasetStatsSchema>;

/** Where a dataset is published on the other surfaces: its STAC Collection, and per file its STAC Item and OGC collection. */
export interface DatasetSurfaces {
  /** Root-relative path of the dataset's STAC Collection (static: works on any host). */
  stac: string;
  /** By file slug: the STAC Item's root-relative path, and the OGC API - Features collection's URL when the file has one. */
  files: Record<string, { stac: string; features?: string }>;
}

/** Props of each page view, by view name. */
export interface ViewProps {
  /** `jsonLd`: the page's schema.org markup, serialised (core/site/json-ld.ts). */
  home: { collections: CollectionListDoc; stats: StatsDoc; tags: Record<string, TagsDoc['tags']>; jsonLd: string };
  collection: {
    page: CollectionPageDoc;
    tags: TagsDoc['tags'];
    /** The tag filter of this listing, when it is a tag page. */
    tag?: { key: string; value: string };
    pageNumber: number;
    pageCount: number;
    /** Root-relative path of the JSON form of this listing page. */
    json: string;
  };
  dataset: { detail: DatasetDetailDoc; surfaces: DatasetSurfaces; jsonLd: string };
  file: { file: FileDoc; schema: SchemaDoc };
  'search-results': Record<string, never>;
  console: { queryOrigin: string; browserSqlLimitBytes: number };
  developers: { queryOrigin: string };
  'not-found': Record<string, never>;
}

/** A page to render: its view and props. */
export type PageView = { [V in keyof ViewProps]: { view: V; props: ViewProps[V] } }[keyof ViewProps];
