import type { CollectionModel, DatasetModel } from '../../../core/model.ts';
import type { RenderContext } from '../../../core/api/catalog/resources.ts';
import { describeDatasetBox, renderStacCollection, renderStacItem } from '../../../core/api/stac/documents.ts';
import { collectionPath, datasetPath, filePath, SITE_PATHS } from '../../../core/site/paths.ts';
import { serializeJson, type TreeFile } from '../../../core/static-files.ts';
import { CATALOG_FILES } from '../../../core/constants.ts';
import { doiUrl, licenseUrl, type Provider } from '../../../schemas/about.ts';

/** Key of the catalog's DCAT document, and its media type. */
export const DCAT_KEY = CATALOG_FILES.dcat;
export const DCAT_TYPE = 'application/ld+json';

/** Key of a collection's DCAT document: a catalog of its datasets. */
export function dcatCollectionKey(collectionSlug: string): string {
  return `dcat/${collectionSlug}.jsonld`;
}

/** The vocabularies DCAT-AP 3 uses, as prefixes. */
const CONTEXT = {
  dcat: 'http://www.w3.org/ns/dcat#',
  dct: 'http://purl.org/dc/terms/',
  foaf: 'http://xmlns.com/foaf/0.1/',
  locn: 'http://www.w3.org/ns/locn#',
  gsp: 'http://www.opengis.net/ont/geosparql#',
  spdx: 'http://spdx.org/rdf/terms#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
  hydra: 'http://www.w3.org/ns/hydra/core#',
};

/** Multihash prefix of a SHA-256 digest in STAC's `file:checksum`. */
const SHA256_MULTIHASH = '1220';

type Node = Record<string, unknown>;

/**
 * `/dcat.jsonld`: the catalog as a DCAT-AP 3 `dcat:Catalog` (JSON-LD), with one `dcat:catalog` per collection.
 * Each collection's catalog is a document of its own (`dcatCollectionKey`; its IRI is that document's `#catalog`)
 * that lists its datasets with their distributions, so an edit rewrites its collection's document and this one,
 * never the whole catalog at once: at 10,000 datasets the whole would be tens of megabytes. The documents are the
 * pages of one Hydra paged collection, first this one and then each collection's in order, as harvesters such as
 * CKAN's DCAT harvester follow `hydra:nextPage` to read a catalog in pages.
 */
export function renderDcatFile(context: RenderContext): TreeFile {
  const base = context.index.settings.baseUrl;
  const catalog: Node = {
    '@context': CONTEXT,
    '@id': catalogIri(base),
    '@type': 'dcat:Catalog',
    'dct:title': 'geoshelf',
    'dct:description': 'A catalog of geospatial datasets: each with its files, their data dictionaries, previews, downloads and SQL, also published as STAC and OGC API - Features.',
    'dct:publisher': describeCatalogPublisher(base),
    'foaf:homepage': { '@id': `${base}${SITE_PATHS.home}` },
    'hydra:view': describePage(base, DCAT_KEY, context.index.model.collections[0], context.index.model.collections.at(-1)),
    'dcat:catalog': context.index.model.collections.map((collection) => ({
      '@id': collectionIri(base, collection),
      '@type': 'dcat:Catalog',
      'dct:title': collection.name,
      'dct:description': collection.description ?? collection.name,
      'foaf:homepage': { '@id': `${base}${collectionPath(collection.slug)}` },
    })),
  };
  return { key: DCAT_KEY, body: serializeJson(catalog), type: DCAT_TYPE };
}

/**
 * A collection's DCAT document: a `dcat:Catalog` of its datasets, part of the catalog of `/dcat.jsonld`, and a page
 * of it whose next page is the `next` collection's document.
 */
export function renderDcatCollectionFile(context: RenderContext, collection: CollectionModel, next?: CollectionModel): TreeFile {
  const base = context.index.settings.baseUrl;
  const catalog: Node = {
    '@context': CONTEXT,
    '@id': collectionIri(base, collection),
    '@type': 'dcat:Catalog',
    'dct:title': collection.name,
    'dct:description': collection.description ?? collection.name,
    'dct:publisher': describeCatalogPublisher(base),
    'dct:isPartOf': { '@id': catalogIri(base) },
    'hydra:view': describePage(base, dcatCollectionKey(collection.slug), next),
    'foaf:homepage': { '@id': `${base}${collectionPath(collection.slug)}` },
    'dct:issued': dateTime(collection.created_at),
    'dct:modified': dateTime(collection.updated_at),
    ...(collection.license ? { 'dct:license': { '@id': licenseUrl(collection.license) } } : {}),
    'dcat:dataset': collection.datasets.map((dataset) => describeDataset(context, collection, dataset)),
  };
  return { key: dcatCollectionKey(collection.slug), body: serializeJson(catalog), type: DCAT_TYPE };
}

/** A dataset as `dcat:Dataset`, its files' stored sources of the latest versions as `dcat:Distribution`s, read from its STAC documents. */
function describeDataset(context: RenderContext, collection: CollectionModel, dataset: DatasetModel): Node {
  const base = context.index.settings.baseUrl;
  const stac = renderStacCollection(context, collection, dataset, 'static');
  const page = `${base}${datasetPath(collection.slug, dataset.slug)}`;
  const box = describeDatasetBox(context.index, dataset);
  const producers = (dataset.providers ?? []).filter((provider) => provider.roles?.includes('producer'));
  const publisher = (dataset.providers ?? []).find((provider) => provider.roles?.some((role) => role === 'host' || role === 'licensor'));
  const distributions = dataset.files.flatMap((file) => {
    const item = renderStacItem(context, { collection, dataset, file }, undefined, 'static');
    return Object.entries(item.assets).filter(([, asset]) => asset.roles?.includes('data')).map(([key, asset]) => ({
      '@id': `${page}#${file.slug}.${key}`,
      '@type': 'dcat:Distribution',
      'dct:title': `${file.name}: ${asset.title ?? key}, version ${item.properties.version}`,
      'dcat:accessURL': { '@id': `${base}${filePath(collection.slug, dataset.slug, file.slug)}` },
      'dcat:downloadURL': { '@id': asset.href },
      ...(asset.type ? { 'dcat:mediaType': { '@id': `https://www.iana.org/assignments/media-types/${asset.type}` } } : {}),
      ...(dataset.license ? { 'dct:license': { '@id': licenseUrl(dataset.license) } } : {}),
      ...(typeof asset['file:size'] === 'number' ? { 'dcat:byteSize': { '@value': String(asset['file:size']), '@type': 'xsd:nonNegativeInteger' } } : {}),
      ...(asset['file:checksum']?.startsWith(SHA256_MULTIHASH) ? {
        'spdx:checksum': { '@type': 'spdx:Checksum', 'spdx:algorithm': { '@id': 'spdx:checksumAlgorithm_sha256' }, 'spdx:checksumValue': { '@value': asset['file:checksum'].slice(SHA256_MULTIHASH.length), '@type': 'xsd:hexBinary' } },
      } : {}),
    }));
  });
  return {
    '@id': page,
    '@type': 'dcat:Dataset',
    'dct:identifier': dataset.doi ? doiUrl(dataset.doi) : context.links.datasetById(dataset.id),
    'dct:title': dataset.name,
    'dct:description': dataset.description ?? dataset.name,
    'dcat:keyword': stac.keywords ?? [],
    'dcat:landingPage': { '@id': page },
    'dct:issued': dateTime(dataset.created_at),
    'dct:modified': dateTime(dataset.updated_at),
    ...(producers.length > 0 ? { 'dct:creator': producers.map(describeAgent) } : {}),
    ...(publisher ? { 'dct:publisher': describeAgent(publisher) } : {}),
    ...(dataset.citation ? { 'dct:bibliographicCitation': dataset.citation } : {}),
    ...(box ? { 'dct:spatial': { '@type': 'dct:Location', 'dcat:bbox': { '@value': boxPolygon(...box), '@type': 'gsp:wktLiteral' } } } : {}),
    ...(dataset.temporal_coverage ? {
      'dct:temporal': {
        '@type': 'dct:PeriodOfTime',
        'dcat:startDate': dateOrTime(dataset.temporal_coverage.start),
        ...(dataset.temporal_coverage.end ? { 'dcat:endDate': dateOrTime(dataset.temporal_coverage.end) } : {}),
      },
    } : {}),
    'dcat:distribution': distributions,
  };
}

/**
 * The page a document is of the catalog's Hydra paged collection (the older `hydra:PagedCollection` terms CKAN's
 * harvester reads): the first page is `/dcat.jsonld`, the next one the `next` collection's document.
 */
function describePage(base: string, key: string, next: CollectionModel | undefined, last?: CollectionModel): Node {
  return {
    '@id': `${base}/${key}`,
    '@type': 'hydra:PagedCollection',
    'hydra:firstPage': { '@id': `${base}/${DCAT_KEY}` },
    ...(next ? { 'hydra:nextPage': { '@id': `${base}/${dcatCollectionKey(next.slug)}` } } : {}),
    ...(last ? { 'hydra:lastPage': { '@id': `${base}/${dcatCollectionKey(last.slug)}` } } : {}),
  };
}

/** Who publishes the catalog: the site itself, as geoshelf has no setting that names its operator. */
function describeCatalogPublisher(base: string): Node {
  return { '@id': `${base}${SITE_PATHS.home}#publisher`, '@type': 'foaf:Agent', 'foaf:name': 'geoshelf' };
}

function catalogIri(base: string): string {
  return `${base}/${DCAT_KEY}#catalog`;
}

function collectionIri(base: string, collection: CollectionModel): string {
  return `${base}/${dcatCollectionKey(collection.slug)}#catalog`;
}

function describeAgent(provider: Provider): Node {
  return { '@type': 'foaf:Agent', 'foaf:name': provider.name, ...(provider.url ? { 'foaf:homepage': { '@id': provider.url } } : {}) };
}

function dateTime(timestamp: string): Node {
  return { '@value': `${timestamp}Z`, '@type': 'xsd:dateTime' };
}

function dateOrTime(value: string): Node {
  return value.length === 10 ? { '@value': value, '@type': 'xsd:date' } : dateTime(value);
}

/** A WGS84 box as the WKT polygon DCAT-AP's `dcat:bbox` takes, longitude first (CRS84). */
function boxPolygon(west: number, south: number, east: number, north: number): string {
  return `POLYGON((${west} ${south},${east} ${south},${east} ${north},${west} ${north},${west} ${south}))`;
}
