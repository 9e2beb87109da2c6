/**
 * The whole-catalog downloads: `/downloads/stac-items.parquet`, every latest Item as stac-geoparquet 1.0.0 (the
 * Items' properties lifted to columns, a WKB footprint with GeoParquet 1.1 metadata and a `bbox` covering, links and
 * assets as nested columns), and `/downloads/datasets.parquet`, one compact row per dataset. DuckDB writes both from
 * newline-delimited JSON, so the nested types are what the documents hold.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { RenderContext } from '../../core/api/catalog/resources.ts';
import { bboxGeometry, renderStacCollection, renderStacItem, stacStaticPath } from '../../core/api/stac/documents.ts';
import { createGeoMetadata, createGeoParquetCopyOptions } from '../../core/geo/geoparquet.ts';
import { encodeWkb, type BBox, type GeometryType } from '../../core/geo/wkb.ts';
import { datasetPath } from '../../core/site/paths.ts';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';
import type { TreeFile } from '../../core/static-files.ts';

/** Keys of the two downloads, and the media type of Parquet. */
export const STAC_ITEMS_DOWNLOAD = 'downloads/stac-items.parquet';
export const DATASETS_DOWNLOAD = 'downloads/datasets.parquet';
export const PARQUET_TYPE = 'application/vnd.apache.parquet';

/** The stac-geoparquet version the Items file follows, and its file metadata key. */
const STAC_GEOPARQUET = { key: 'stac-geoparquet', version: '1.0.0' } as const;

/** Writes both downloads of the catalog and returns them as files of the tree. */
export async function renderCatalogDownloads(context: RenderContext): Promise<TreeFile[]> {
  const scratch = await mkdtemp(join(tmpdir(), 'geoshelf-downloads-'));
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await instance.connect();
  try {
    const items = listItemRows(context);
    const datasets = listDatasetRows(context);
    const extent = items.reduce<BBox | null>((box, row) => (row.bbox ? (box ? [Math.min(box[0], row.bbox.xmin), Math.min(box[1], row.bbox.ymin), Math.max(box[2], row.bbox.xmax), Math.max(box[3], row.bbox.ymax)] : [row.bbox.xmin, row.bbox.ymin, row.bbox.xmax, row.bbox.ymax]) : box), null);
    const types = [...new Set(items.flatMap((row) => (row.geometryType ? [row.geometryType] : [])))].sort() as GeometryType[];
    const geo = createGeoMetadata(types, extent ?? [-180, -90, 180, 90]);
    const itemsPath = join(scratch, 'items.ndjson');
    await writeFile(itemsPath, items.map((row) => JSON.stringify(row.json)).join('\n'));
    const itemsOut = join(scratch, 'stac-items.parquet');
    await connection.run(
      `COPY (SELECT * REPLACE (st_geomfromwkb(from_hex(geometry)) AS geometry, ${castColumns({ ...ITEM_TYPES, datetime: 'TIMESTAMPTZ', created: 'TIMESTAMPTZ', updated: 'TIMESTAMPTZ' })}) FROM ${readNdjson(itemsPath)}) ` +
      `TO ${quoteLiteral(itemsOut)} (${createGeoParquetCopyOptions(geo, { metadata: { [STAC_GEOPARQUET.key]: JSON.stringify({ version: STAC_GEOPARQUET.version }) } })})`,
    );
    const datasetsPath = join(scratch, 'datasets.ndjson');
    await writeFile(datasetsPath, datasets.map((row) => JSON.stringify(row)).join('\n'));
    const datasetsOut = join(scratch, 'datasets.parquet');
    await connection.run(
      `COPY (SELECT * REPLACE (${castColumns(DATASET_TYPES)}) FROM ${readNdjson(datasetsPath)}) TO ${quoteLiteral(datasetsOut)} (FORMAT parquet, COMPRESSION zstd)`,
    );
    return [
      { key: STAC_ITEMS_DOWNLOAD, body: await readFile(itemsOut), type: PARQUET_TYPE },
      { key: DATASETS_DOWNLOAD, body: await readFile(datasetsOut), type: PARQUET_TYPE },
    ];
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Every key of every row is read, so that the nested types are the union of what the rows hold. */
function readNdjson(path: string): string {
  return `read_json(${quoteLiteral(path)}, format = 'newline_delimited', sample_size = -1, maximum_object_size = 67108864)`;
}

/** Properties an Item may leave out, present in every row so that each is a column of its type even when no Item has it. */
const OPTIONAL_PROPERTIES = ['description', 'table:row_count', 'table:primary_geometry'] as const;

function withNulls(properties: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(OPTIONAL_PROPERTIES.map((name) => [name, properties[name] ?? null]));
}

/** The scalar columns whose type a catalog with only nulls in them would leave to DuckDB's guess (JSON). */
const ITEM_TYPES = { description: 'VARCHAR', 'table:row_count': 'BIGINT', 'table:primary_geometry': 'VARCHAR', 'proj:code': 'VARCHAR' };
const DATASET_TYPES = { description: 'VARCHAR', keywords: 'VARCHAR[]', license: 'VARCHAR', doi: 'VARCHAR', citation: 'VARCHAR', created_at: 'TIMESTAMP', updated_at: 'TIMESTAMP' };

/** `* REPLACE` casts of columns to their types. */
function castColumns(types: Record<string, string>): string {
  return Object.entries(types).map(([name, type]) => `CAST(${quoteIdentifier(name)} AS ${type}) AS ${quoteIdentifier(name)}`).join(', ');
}

interface ItemRow {
  bbox: { xmin: number; ymin: number; xmax: number; ymax: number } | null;
  geometryType: GeometryType | null;
  json: Record<string, unknown>;
}

/** The latest Item of every file as a stac-geoparquet row: properties lifted, the footprint as WKB in hex. */
function listItemRows(context: RenderContext): ItemRow[] {
  const rows: ItemRow[] = [];
  for (const collection of context.index.model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        const { type: _type, stac_version, stac_extensions, id, geometry: _footprint, bbox, properties, links, assets, collection: collectionId } = renderStacItem(context, { collection, dataset, file }, undefined, 'static');
        const geometry = bbox ? bboxGeometry(bbox) : null;
        const box = bbox ? { xmin: bbox[0], ymin: bbox[1], xmax: bbox[2], ymax: bbox[3] } : null;
        rows.push({
          bbox: box,
          geometryType: geometry?.type ?? null,
          json: { stac_version, stac_extensions, id, geometry: geometry ? Buffer.from(encodeWkb(geometry)).toString('hex') : null, bbox: box, ...properties, ...withNulls(properties), links, assets, collection: collectionId },
        });
      }
    }
  }
  return rows;
}

/** One row per dataset: ids, names, tags, what the record says about the data, its box and where to read more. */
function listDatasetRows(context: RenderContext): Record<string, unknown>[] {
  const base = context.index.settings.baseUrl;
  return context.index.model.collections.flatMap((collection) => collection.datasets.map((dataset) => {
    const stac = renderStacCollection(context, collection, dataset, 'static');
    const hasBox = dataset.files.some((file) => file.formats.some((link) => link.sources.some((source) => source.metadata?.bounds)));
    const [xmin, ymin, xmax, ymax] = stac.extent.spatial.bbox[0]!;
    return {
      id: dataset.id,
      collection: collection.slug,
      slug: dataset.slug,
      name: dataset.name,
      description: dataset.description ?? null,
      tags: Object.entries(dataset.tags).map(([key, value]) => ({ key, values: [value].flat() })),
      keywords: dataset.keywords ?? [],
      license: dataset.license ?? null,
      doi: dataset.doi ?? null,
      citation: dataset.citation ?? null,
      providers: (dataset.providers ?? []).map((provider) => ({ name: provider.name, roles: provider.roles ?? [], url: provider.url ?? null })),
      file_count: dataset.files.length,
      files: dataset.files.map((file) => file.slug),
      bbox: hasBox ? { xmin, ymin, xmax, ymax } : null,
      created_at: dataset.created_at,
      updated_at: dataset.updated_at,
      page_url: `${base}${datasetPath(collection.slug, dataset.slug)}`,
      api_url: context.links.dataset(collection.slug, dataset.slug),
      stac_url: `${base}${stacStaticPath(collection, dataset)}`,
    };
  }));
}
