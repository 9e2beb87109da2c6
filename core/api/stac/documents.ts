import type { CatalogIndex } from '../../catalog-index.ts';
import type { CollectionModel, DatasetModel, FileModel, SourceModel } from '../../model.ts';
import type { FormatType } from '../../../schemas/format.ts';
import { CATALOG_FILES, PARQUET_TYPE } from '../../constants.ts';
import { doiUrl, isSpdxLicense, licenseTitle, licenseUrl, type TemporalCoverage } from '../../../schemas/about.ts';
import type { StacAsset, StacBbox, StacCatalog, StacCollection, StacGeometry, StacItem, StacLink } from '../../../schemas/stac.ts';
import { listVersions, pickSchemaSource, type RenderContext } from '../catalog/resources.ts';
import { collectionPath, datasetPath, filePath, SITE_PATHS } from '../../site/paths.ts';
import { addLonInterval, createLonExtent, finishLonExtent } from '../../geo/lon-extent.ts';
import { OGC_RELS, OGC_TYPES } from '../ogc/routes.ts';

/**
 * STAC 1.1 documents of the catalog: the static tree at /stac and the STAC API at /stac/api render them with
 * the same functions, differing only in their links (`StacStyle`). Pure: no I/O.
 */

export const STAC_VERSION = '1.1.0';

/** Which surface the links of a document point into: the static tree or the STAC API. */
export type StacStyle = 'static' | 'api';

/** A file (layer) with the collection and dataset it belongs to. */
export interface StacFileRef {
  collection: CollectionModel;
  dataset: DatasetModel;
  file: FileModel;
}

/** The extension schemas items use, exactly as the official schemas' `$id`s require them. */
export const STAC_EXTENSIONS = {
  file: 'https://stac-extensions.github.io/file/v2.1.0/schema.json',
  projection: 'https://stac-extensions.github.io/projection/v2.0.0/schema.json',
  table: 'https://stac-extensions.github.io/table/v1.2.0/schema.json',
  version: 'https://stac-extensions.github.io/version/v1.2.0/schema.json',
  scientific: 'https://stac-extensions.github.io/scientific/v1.0.0/schema.json',
} as const;

/** Id of the root Catalog of the static tree. */
export const STAC_ROOT_ID = 'geoshelf';

/** Media types of STAC documents: Catalogs and Collections are JSON, Items GeoJSON. */
export const STAC_JSON_TYPE = 'application/json';
export const STAC_ITEM_TYPE = 'application/geo+json';

/** STAC 1.1's licence for one that is not an SPDX identifier or expression: the terms are linked instead. */
const OTHER_LICENSE = 'other';

/**
 * What an asset of each format is: its media type, and whether it is downloaded as a ZIP made by the
 * download-zip route (a shapefile with its sidecars, a file geodatabase folder) rather than as the stored file.
 */
const ASSET_KINDS: Record<FormatType, { type: string; zip: boolean; roles: string[] }> = {
  geoparquet: { type: PARQUET_TYPE, zip: false, roles: ['data'] },
  geojson: { type: 'application/geo+json', zip: false, roles: ['data'] },
  geopackage: { type: 'application/geopackage+sqlite3', zip: false, roles: ['data'] },
  shapefile: { type: 'application/zip', zip: true, roles: ['data'] },
  file_geodatabase: { type: 'application/zip', zip: true, roles: ['data'] },
  pmtiles: { type: 'application/vnd.pmtiles', zip: false, roles: ['visual'] },
};

/** Multihash prefix of a SHA-256 digest (code 0x12, length 0x20), as the file extension's `file:checksum` wants. */
const SHA256_MULTIHASH_PREFIX = '1220';

/** Id of the STAC Collection of a dataset: the slugs are [a-z0-9-], so the dot cannot be ambiguous. */
export function stacCollectionId(collection: CollectionModel, dataset: DatasetModel): string {
  return `${collection.slug}.${dataset.slug}`;
}

/** Id of the Item of one version of a file: the file's slug for its latest version, `{slug}@{version}` for older ones. */
export function stacItemId(file: FileModel, version: string, latest: string): string {
  return version === latest ? file.slug : `${file.slug}@${version}`;
}

/**
 * The versions of a file, newest first, in the order `/api` gives them (the schema route's default version is
 * the first): versions compare part by part, numerically where both parts are numbers.
 */
export function fileVersions(_index: CatalogIndex, file: FileModel): string[] {
  return listVersions(fileSources(file));
}

/** The footprint and time of a file's latest Item, for search without rendering the Item. */
export function stacItemFacts(index: CatalogIndex, ref: StacFileRef): { bbox: [number, number, number, number] | null; datetime: string } {
  const version = fileVersions(index, ref.file)[0] ?? '';
  return { bbox: versionBounds(index, ref.file, version), datetime: versionTimes(ref.file, version).datetime };
}

/** The latest Item's properties that item search filters on besides its footprint and datetime (`core/api/stac/filter.ts`). */
export interface StacItemFilterFacts {
  created: string;
  updated: string;
  version: string;
  rowCount: number | null;
  crs: string | null;
}

/** What `renderStacItem` puts in the latest Item's `created`, `updated`, `version`, `table:row_count` and `proj:code`. */
export function stacItemFilterFacts(index: CatalogIndex, file: FileModel): StacItemFilterFacts {
  const version = fileVersions(index, file)[0] ?? '';
  const { created, updated } = versionTimes(file, version);
  const primary = primarySource(index, file, version);
  const rowCount = primary?.metadata?.feature_count;
  return { created, updated, version, rowCount: typeof rowCount === 'number' ? rowCount : null, crs: primary?.stored?.crs ?? null };
}

/** The source an Item describes: the version's best schema source, else its first. */
function primarySource(index: CatalogIndex, file: FileModel, version: string): SourceModel | undefined {
  return pickSchemaSource(file, index, version)?.source ?? versionSources(file, version)[0];
}

/**
 * The Item of one version of a file (`undefined`: the latest). Its footprint is the file's WGS84 bounds, its
 * assets the stored files of that version's sources, its properties the data dictionary (table extension), the
 * CRS (projection extension) and the version with links to the others (version extension). A given `version`
 * must be one of `fileVersions`: callers answering a request check it first.
 */
export function renderStacItem(context: RenderContext, ref: StacFileRef, version: string | undefined, style: StacStyle): StacItem {
  const { index } = context;
  const { collection, dataset, file } = ref;
  const versions = fileVersions(index, file);
  const latest = versions[0] ?? '';
  const current = version ?? latest;
  const position = versions.indexOf(current);
  const urls = stacUrls(index.settings.baseUrl, style);
  const itemUrl = (v: string) => urls.item(collection, dataset, file, v, latest);
  const primary = primarySource(index, file, current);
  const metadata = primary?.metadata;
  const bbox = versionBounds(index, file, current);
  const times = versionTimes(file, current);
  const columns = metadata?.columns ?? [];
  const versionLinks: StacLink[] = [
    ...(current === latest ? [] : [{ rel: 'latest-version', href: itemUrl(latest), type: STAC_ITEM_TYPE }]),
    ...(position + 1 < versions.length ? [{ rel: 'predecessor-version', href: itemUrl(versions[position + 1]!), type: STAC_ITEM_TYPE }] : []),
    ...(position > 0 ? [{ rel: 'successor-version', href: itemUrl(versions[position - 1]!), type: STAC_ITEM_TYPE }] : []),
  ];
  return {
    type: 'Feature',
    stac_version: STAC_VERSION,
    stac_extensions: [STAC_EXTENSIONS.file, STAC_EXTENSIONS.projection, STAC_EXTENSIONS.table, STAC_EXTENSIONS.version],
    id: stacItemId(file, current, latest),
    geometry: bbox ? bboxGeometry(bbox) : null,
    ...(bbox ? { bbox } : {}),
    properties: {
      title: file.name,
      ...(file.description ? { description: file.description } : {}),
      datetime: times.datetime,
      created: times.created,
      updated: times.updated,
      version: current,
      'table:columns': columns.map((column) => ({ name: column.name, type: column.type, ...(column.description ? { description: column.description } : {}) })),
      ...(typeof metadata?.feature_count === 'number' ? { 'table:row_count': metadata.feature_count } : {}),
      ...(primary?.stored?.geometry_column ? { 'table:primary_geometry': primary.stored.geometry_column } : {}),
      'proj:code': primary?.stored?.crs ?? null,
    },
    links: [
      { rel: 'self', href: itemUrl(current), type: STAC_ITEM_TYPE },
      { rel: 'root', href: urls.root(), type: STAC_JSON_TYPE },
      { rel: 'parent', href: urls.collection(collection, dataset), type: STAC_JSON_TYPE },
      { rel: 'collection', href: urls.collection(collection, dataset), type: STAC_JSON_TYPE },
      ...versionLinks,
      { rel: 'alternate', href: `${index.settings.baseUrl}${filePath(collection.slug, dataset.slug, file.slug)}`, type: 'text/html', title: 'Web page of the file' },
      {
        rel: 'describedby',
        href: context.links.url({ route: 'schema', collectionSlug: collection.slug, datasetSlug: dataset.slug, fileSlug: file.slug, params: current === latest ? {} : { version: current } }),
        type: STAC_JSON_TYPE,
        title: 'Data dictionary in the catalog API',
      },
    ],
    assets: renderAssets(context, ref, current),
    collection: stacCollectionId(collection, dataset),
  };
}

/**
 * The Collection of a dataset: its extent covers every file's bounds (see {@link describeStacExtent}) and the times
 * of every source version.
 */
export function renderStacCollection(context: RenderContext, collection: CollectionModel, dataset: DatasetModel, style: StacStyle): StacCollection {
  const { index } = context;
  const urls = stacUrls(index.settings.baseUrl, style);
  const self = urls.collection(collection, dataset);
  const fileBoxes = listFileBoxes(index, dataset);
  const times = dataset.files.flatMap((file) => fileSources(file).map((source) => utc(source.created_at))).sort();
  const interval: [string | null, string | null] = dataset.temporal_coverage ? coverageInterval(dataset.temporal_coverage) : [times[0] ?? null, times.at(-1) ?? null];
  const cited = dataset.doi !== undefined || dataset.citation !== undefined;
  const children: StacLink[] = style === 'static'
    ? dataset.files.map((file) => ({ rel: 'item', href: `${index.settings.baseUrl}${stacStaticPath(collection, dataset, file)}`, type: STAC_ITEM_TYPE, title: file.name }))
    : [
      { rel: 'items', href: `${self}/items`, type: STAC_ITEM_TYPE, title: 'Items of the latest versions of the files' },
      { rel: OGC_RELS.queryables, href: `${self}/queryables`, type: OGC_TYPES.schema, title: 'Queryables of the items' },
      { rel: OGC_RELS.sortables, href: `${self}/sortables`, type: OGC_TYPES.schema, title: 'Sortables of the items' },
    ];
  return {
    type: 'Collection',
    stac_version: STAC_VERSION,
    ...(cited ? { stac_extensions: [STAC_EXTENSIONS.scientific] } : {}),
    id: stacCollectionId(collection, dataset),
    title: dataset.name,
    description: dataset.description ?? dataset.name,
    keywords: [...new Set([...tagKeywords(dataset), ...(dataset.keywords ?? [])])],
    license: dataset.license && isSpdxLicense(dataset.license) ? dataset.license : OTHER_LICENSE,
    ...(dataset.providers ? { providers: dataset.providers.map((provider) => ({ ...provider })) } : {}),
    ...(dataset.doi ? { 'sci:doi': dataset.doi } : {}),
    ...(dataset.citation ? { 'sci:citation': dataset.citation } : {}),
    extent: {
      spatial: { bbox: describeStacExtent(fileBoxes) },
      temporal: { interval: [interval] },
    },
    created: utc(dataset.created_at),
    updated: utc(dataset.updated_at),
    links: [
      { rel: 'self', href: self, type: STAC_JSON_TYPE },
      { rel: 'root', href: urls.root(), type: STAC_JSON_TYPE },
      { rel: 'parent', href: style === 'static' ? urls.collectionCatalog(collection) : urls.root(), type: STAC_JSON_TYPE },
      ...children,
      { rel: 'alternate', href: `${index.settings.baseUrl}${datasetPath(collection.slug, dataset.slug)}`, type: 'text/html', title: 'Web page of the dataset' },
      { rel: 'describedby', href: context.links.dataset(collection.slug, dataset.slug), type: STAC_JSON_TYPE, title: 'The dataset in the catalog API' },
      ...(dataset.license ? [{ rel: 'license', href: licenseUrl(dataset.license), title: licenseTitle(dataset.license) }] : []),
      ...(dataset.doi ? [{ rel: 'cite-as', href: doiUrl(dataset.doi), title: `DOI ${dataset.doi}` }] : []),
    ],
  };
}

/** The bounds of the latest version of each file of a dataset that has some. */
function listFileBoxes(index: CatalogIndex, dataset: DatasetModel): StacBbox[] {
  return dataset.files.flatMap((file) => {
    const bbox = versionBounds(index, file, fileVersions(index, file)[0] ?? '');
    return bbox ? [bbox] : [];
  });
}

/**
 * The overall WGS84 box of a dataset, as its STAC Collection's extent gives it first (from -180 to 180 when it
 * crosses the antimeridian); null when no file has bounds, where the extent says the whole world.
 */
export function describeDatasetBox(index: CatalogIndex, dataset: DatasetModel): StacBbox | null {
  const boxes = listFileBoxes(index, dataset);
  return boxes.length === 0 ? null : describeStacExtent(boxes)[0]!;
}

/** A temporal coverage as a STAC interval: RFC 3339 instants in UTC, open at the end while it is ongoing. */
function coverageInterval(coverage: TemporalCoverage): [string, string | null] {
  const instant = (value: string, end: boolean) => (value.length === 10 ? `${value}T${end ? '23:59:59' : '00:00:00'}Z` : `${value}Z`);
  return [instant(coverage.start, false), coverage.end === undefined ? null : instant(coverage.end, true)];
}

/** The root Catalog of the static tree: one child Catalog per geoshelf collection. */
export function renderStacRoot(context: RenderContext): StacCatalog {
  const { index } = context;
  const urls = stacUrls(index.settings.baseUrl, 'static');
  return {
    type: 'Catalog',
    stac_version: STAC_VERSION,
    id: STAC_ROOT_ID,
    title: 'geoshelf',
    description: 'STAC catalog of geoshelf: a Catalog per collection, a Collection per dataset and an Item per file (layer), with every stored version of each file.',
    links: [
      { rel: 'self', href: urls.root(), type: STAC_JSON_TYPE },
      { rel: 'root', href: urls.root(), type: STAC_JSON_TYPE },
      ...index.model.collections.map((collection) => ({ rel: 'child', href: urls.collectionCatalog(collection), type: STAC_JSON_TYPE, title: collection.name })),
      { rel: 'alternate', href: `${index.settings.baseUrl}${SITE_PATHS.home}`, type: 'text/html', title: 'Web app' },
      { rel: 'alternate', href: `${index.settings.baseUrl}/${CATALOG_FILES.stacItems}`, type: PARQUET_TYPE, title: 'Every latest Item in one stac-geoparquet file' },
      { rel: 'describedby', href: context.links.root(), type: STAC_JSON_TYPE, title: 'The catalog API' },
    ],
  };
}

/** The Catalog of one geoshelf collection in the static tree: one child Collection per dataset. */
export function renderStacCollectionCatalog(context: RenderContext, collection: CollectionModel): StacCatalog {
  const { index } = context;
  const urls = stacUrls(index.settings.baseUrl, 'static');
  return {
    type: 'Catalog',
    stac_version: STAC_VERSION,
    id: collection.slug,
    title: collection.name,
    description: collection.description ?? collection.name,
    links: [
      { rel: 'self', href: urls.collectionCatalog(collection), type: STAC_JSON_TYPE },
      { rel: 'root', href: urls.root(), type: STAC_JSON_TYPE },
      { rel: 'parent', href: urls.root(), type: STAC_JSON_TYPE },
      ...collection.datasets.map((dataset) => ({ rel: 'child', href: urls.collection(collection, dataset), type: STAC_JSON_TYPE, title: dataset.name })),
      { rel: 'alternate', href: `${index.settings.baseUrl}${collectionPath(collection.slug)}`, type: 'text/html', title: 'Web page of the collection' },
      { rel: 'describedby', href: context.links.collection(collection.slug), type: STAC_JSON_TYPE, title: 'The collection in the catalog API' },
    ],
  };
}

/**
 * Path of a document of the static tree: the root (no argument), a collection's Catalog, a dataset's
 * Collection, a file's latest Item, or with `version` the copy of any version's Item (the latest's too), under
 * `versions/` with the version as one percent-encoded segment.
 * @example stacStaticPath(c, d, f, '1.1.4') // '/stac/natural-earth/countries/countries-110m/versions/1.1.4'
 */
export function stacStaticPath(collection?: CollectionModel, dataset?: DatasetModel, file?: FileModel, version?: string): string {
  const segments = [collection?.slug, dataset?.slug, file?.slug].filter((slug) => slug !== undefined);
  const path = ['/stac', ...segments].join('/');
  return file && version !== undefined ? `${path}/versions/${encodeURIComponent(version)}` : path;
}

/**
 * URLs of STAC documents in one style. Static: `stacStaticPath` under the base URL; API:
 * `{base}/stac/api/collections/{id}` and `…/items/{itemId}`.
 */
function stacUrls(baseUrl: string, style: StacStyle) {
  const apiRoot = `${baseUrl}/stac/api`;
  const collection = (c: CollectionModel, d: DatasetModel) =>
    style === 'static' ? `${baseUrl}${stacStaticPath(c, d)}` : `${apiRoot}/collections/${stacCollectionId(c, d)}`;
  return {
    root: () => (style === 'static' ? `${baseUrl}${stacStaticPath()}` : apiRoot),
    collectionCatalog: (c: CollectionModel) => `${baseUrl}${stacStaticPath(c)}`,
    collection,
    /** The Item of `version`: the canonical URL of the latest one, whose id is the file's slug. */
    item: (c: CollectionModel, d: DatasetModel, f: FileModel, version: string, latest: string) =>
      style === 'static'
        ? `${baseUrl}${stacStaticPath(c, d, f, version === latest ? undefined : version)}`
        : `${collection(c, d)}/items/${encodeURIComponent(stacItemId(f, version, latest))}`,
  };
}

/** Every source of a file across its formats, in model order. */
function fileSources(file: FileModel): SourceModel[] {
  return file.formats.flatMap((link) => link.sources);
}

/** The sources of one version of a file, in model order. */
function versionSources(file: FileModel, version: string): SourceModel[] {
  return fileSources(file).filter((source) => source.version === version);
}

/** WGS84 bounds of a version: those of its best schema source, else of any of its sources that has some. */
function versionBounds(index: CatalogIndex, file: FileModel, version: string): StacBbox | null {
  const best = pickSchemaSource(file, index, version)?.source.metadata?.bounds;
  if (best) return [...best];
  const any = versionSources(file, version).find((source) => source.metadata?.bounds)?.metadata?.bounds;
  return any ? [...any] : null;
}

/** When a version was published (its newest source's creation), first created and last updated, in UTC. */
function versionTimes(file: FileModel, version: string): { datetime: string; created: string; updated: string } {
  const sources = versionSources(file, version);
  const created = sources.map((source) => source.created_at).sort();
  const updated = sources.map((source) => source.updated_at).sort();
  const fallback = file.created_at;
  return { datetime: utc(created.at(-1) ?? fallback), created: utc(created[0] ?? fallback), updated: utc(updated.at(-1) ?? file.updated_at) };
}

/** A model timestamp (UTC without zone) as RFC 3339, which STAC requires. */
function utc(timestamp: string): string {
  return timestamp.endsWith('Z') ? timestamp : `${timestamp}Z`;
}

/**
 * The footprint of a box: a polygon, a point when the box is one position, and across ±180° the two halves as
 * a MultiPolygon (RFC 7946 §3.1.9), so no client draws the box round the other side of the world.
 */
export function bboxGeometry([west, south, east, north]: StacBbox): StacGeometry {
  if (west === east && south === north) return { type: 'Point', coordinates: [west, south] };
  const ring = (w: number, e: number) => [[[w, south], [e, south], [e, north], [w, north], [w, south]]];
  if (west <= east) return { type: 'Polygon', coordinates: ring(west, east) };
  return { type: 'MultiPolygon', coordinates: [ring(west, 180), ring(-180, east)] };
}

/**
 * The `bbox` array of a Collection's extent: the overall box first, then one per file when there are two or more
 * (STAC allows one box, or three and more). An overall box that crosses ±180° (west > east) is written as
 * [-180, south, 180, north] followed by its two halves: /stac/api is also an OGC API - Features service, and QGIS
 * 3.22 reads only the first box of a collection there and swaps a west > east pair into [east, west] (the Atlantic
 * for the United States, from Guam to the Virgin Islands). The halves keep the precise extent for every client,
 * even one that does not read crossing boxes, and make the three boxes STAC needs when a file is alone.
 */
export function describeStacExtent(fileBoxes: StacBbox[]): StacBbox[] {
  const boxes: StacBbox[] = fileBoxes.length > 1 ? [unionBoxes(fileBoxes), ...fileBoxes] : fileBoxes.length === 1 ? fileBoxes : [[-180, -90, 180, 90]];
  const [west, south, east, north] = boxes[0]!;
  if (west <= east) return boxes;
  return [[-180, south, 180, north], [west, south, 180, north], [-180, south, east, north], ...boxes.slice(1)];
}

/** The smallest box covering several, crossing ±180° when that is smaller (lon-extent's rule). */
function unionBoxes(boxes: StacBbox[]): StacBbox {
  const lon = createLonExtent();
  for (const [west, , east] of boxes) addLonInterval(lon, west, east);
  const [west, east] = finishLonExtent(lon) ?? [-180, 180];
  return [west, Math.min(...boxes.map((box) => box[1])), east, Math.max(...boxes.map((box) => box[3]))];
}

/** Keywords of a dataset: its tag values, each once, in tag order. */
function tagKeywords(dataset: DatasetModel): string[] {
  return [...new Set(Object.values(dataset.tags).flatMap((value) => (Array.isArray(value) ? value : [value])))];
}

/**
 * The assets of a version: one per source, keyed by format slug (with the source id when a format has several
 * sources of the version). Stored files carry size and checksum; shapefiles and file geodatabases link the
 * download-zip route, whose archive is made on request, so they carry neither.
 */
function renderAssets(context: RenderContext, ref: StacFileRef, version: string): Record<string, StacAsset> {
  const { index, links } = context;
  const { collection, dataset, file } = ref;
  const assets: Record<string, StacAsset> = Object.create(null);
  for (const link of file.formats) {
    const format = index.formatsById.get(link.format_id)!;
    const kind = ASSET_KINDS[format.format_type];
    for (const source of link.sources) {
      if (source.version !== version) continue;
      const href = kind.zip && source.source_type === 'file'
        ? links.downloadZip(collection.slug, dataset.slug, file.slug, source.id)
        : source.url ?? (source.location.type === 'api' ? source.location.url : undefined);
      if (href === undefined) continue;
      const key = format.slug in assets ? `${format.slug}-${source.id}` : format.slug;
      const stored = kind.zip ? undefined : source.stored;
      assets[key] = {
        href,
        type: source.source_type === 'api' ? (format.mime_type ?? kind.type) : kind.type,
        title: kind.zip ? `${format.name} (ZIP)` : format.name,
        ...(source.metadata?.description ? { description: source.metadata.description } : {}),
        roles: kind.roles,
        ...(stored && typeof source.metadata?.size_bytes === 'number' ? { 'file:size': source.metadata.size_bytes } : {}),
        ...(stored ? { 'file:checksum': `${SHA256_MULTIHASH_PREFIX}${stored.sha256}` } : {}),
        ...(source.stored ? { 'proj:code': source.stored.crs } : {}),
      };
    }
  }
  return assets;
}
