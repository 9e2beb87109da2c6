import type { CatalogIndex } from '../catalog-index.ts';
import type { CollectionModel, DatasetModel } from '../model.ts';
import type { RenderContext } from '../api/catalog/resources.ts';
import { describeDatasetBox, renderStacCollection, renderStacItem } from '../api/stac/documents.ts';
import { doiUrl, licenseUrl, type Provider, type TemporalCoverage } from '../../schemas/about.ts';
import { collectionPath, datasetPath, filePath, SITE_PATHS } from './paths.ts';

/** The schema.org context, as Google's documentation writes it. */
const SCHEMA_ORG = 'https://schema.org/';
/** Google Dataset Search ignores a description shorter than this (and longer than 5,000 characters). */
const MIN_DESCRIPTION = 50;
const MAX_DESCRIPTION = 5000;

/** A JSON-LD node: what `describeDatasetJsonLd` and `describeCatalogJsonLd` return. */
export type JsonLdNode = Record<string, unknown>;

/**
 * schema.org `Dataset` markup of a dataset's page, as Google Dataset Search reads it: name, description, URL,
 * identifiers, licence, creators and publisher from the record's providers, keywords, the WGS84 box of its files
 * as a `GeoShape`, its temporal coverage, the columns of each file's dictionary as `variableMeasured`, and one
 * `DataDownload` per stored file of the latest versions. It is built from the dataset's STAC Collection and Items,
 * so the three descriptions cannot drift.
 */
export function describeDatasetJsonLd(context: RenderContext, collection: CollectionModel, dataset: DatasetModel): JsonLdNode {
  const base = context.index.settings.baseUrl;
  const stac = renderStacCollection(context, collection, dataset, 'static');
  const items = dataset.files.map((file) => ({ file, item: renderStacItem(context, { collection, dataset, file }, undefined, 'static') }));
  const box = describeDatasetBox(context.index, dataset);
  const url = `${base}${datasetPath(collection.slug, dataset.slug)}`;
  const versions = [...new Set(items.map(({ item }) => item.properties.version))];
  const variables = new Map<string, JsonLdNode>();
  for (const { item } of items) {
    for (const column of item.properties['table:columns'] ?? []) {
      if (variables.has(column.name)) continue;
      variables.set(column.name, { '@type': 'PropertyValue', name: column.name, ...(column.description ? { description: column.description } : {}) });
    }
  }
  const creators = pickProviders(dataset.providers, ['producer']);
  const publishers = pickProviders(dataset.providers, ['host', 'licensor']);
  return {
    '@context': SCHEMA_ORG,
    '@type': 'Dataset',
    '@id': url,
    name: dataset.name,
    description: describeAtLength(dataset.description, `${dataset.name}: ${dataset.files.length === 1 ? 'one file' : `${dataset.files.length} files`} of geospatial data in the ${collection.name} collection of this catalog.`),
    url,
    identifier: [...(dataset.doi ? [doiUrl(dataset.doi)] : []), context.links.datasetById(dataset.id)],
    ...(dataset.doi ? { sameAs: doiUrl(dataset.doi) } : {}),
    ...(dataset.license ? { license: licenseUrl(dataset.license) } : {}),
    isAccessibleForFree: true,
    ...(creators.length > 0 ? { creator: creators.map(describeProvider) } : {}),
    ...(publishers.length > 0 ? { publisher: describeProvider(publishers[0]!) } : {}),
    ...(dataset.citation ? { citation: dataset.citation } : {}),
    keywords: stac.keywords,
    ...(box ? { spatialCoverage: { '@type': 'Place', geo: { '@type': 'GeoShape', box: `${box[1]} ${box[0]} ${box[3]} ${box[2]}` } } } : {}),
    ...(dataset.temporal_coverage ? { temporalCoverage: describeCoverage(dataset.temporal_coverage) } : {}),
    ...(variables.size > 0 ? { variableMeasured: [...variables.values()] } : {}),
    distribution: items.flatMap(({ file, item }) => Object.values(item.assets)
      .filter((asset) => asset.roles?.includes('data'))
      .map((asset) => ({ '@type': 'DataDownload', name: `${file.name}: ${asset.title ?? 'file'}, version ${item.properties.version}`, encodingFormat: asset.type, contentUrl: asset.href }))),
    ...(versions.length === 1 && versions[0] ? { version: versions[0] } : {}),
    dateModified: `${dataset.updated_at}Z`,
    hasPart: items.map(({ file }) => ({ '@type': 'Dataset', name: file.name, url: `${base}${filePath(collection.slug, dataset.slug, file.slug)}`, description: describeAtLength(file.description ?? undefined, `${file.name}, a file of ${dataset.name}.`) })),
    includedInDataCatalog: { '@type': 'DataCatalog', name: collection.name, url: `${base}${collectionPath(collection.slug)}` },
  };
}

/**
 * schema.org `DataCatalog` markup of the home page: the catalog, with each collection as a catalog of its own (name,
 * page and licence: the page shows the descriptions, and at 100,000 datasets the home page has hundreds of cards).
 */
export function describeCatalogJsonLd(index: CatalogIndex): JsonLdNode {
  const base = index.settings.baseUrl;
  return {
    '@context': SCHEMA_ORG,
    '@type': 'DataCatalog',
    '@id': `${base}${SITE_PATHS.home}`,
    name: 'geoshelf',
    description: 'A catalog of geospatial datasets: each with its files, their data dictionaries, previews, downloads and SQL, also published as STAC and OGC API - Features.',
    url: `${base}${SITE_PATHS.home}`,
    hasPart: index.model.collections.map((collection) => ({
      '@type': 'DataCatalog',
      name: collection.name,
      url: `${base}${collectionPath(collection.slug)}`,
      ...(collection.license ? { license: licenseUrl(collection.license) } : {}),
    })),
  };
}

/**
 * A JSON-LD node as the text of a `<script type="application/ld+json">`: `<` is escaped, so no value can end the
 * script element.
 */
export function serializeJsonLd(node: JsonLdNode): string {
  return JSON.stringify(node).replaceAll('<', '\\u003c');
}

function pickProviders(providers: Provider[] | undefined, roles: Provider['roles'] & {}): Provider[] {
  return (providers ?? []).filter((provider) => provider.roles?.some((role) => roles.includes(role)));
}

function describeProvider(provider: Provider): JsonLdNode {
  return { '@type': 'Organization', name: provider.name, ...(provider.url ? { url: provider.url } : {}) };
}

/** A description of the length Google reads: the record's when it is long enough, else the fallback after it. */
function describeAtLength(description: string | undefined, fallback: string): string {
  const text = description && description.length >= MIN_DESCRIPTION ? description : [description, fallback].filter(Boolean).join(' ');
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text;
}

/** A temporal coverage as an ISO 8601 interval, `..` for an open end, as schema.org's `temporalCoverage` takes it. */
function describeCoverage(coverage: TemporalCoverage): string {
  return `${coverage.start}/${coverage.end ?? '..'}`;
}
