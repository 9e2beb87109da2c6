/**
 * The whole-catalog downloads: `/downloads/stac-items.parquet`, every latest Item as stac-geoparquet 1.0.0 (the
 * Items' properties lifted to columns, a WKB footprint with GeoParquet 1.1 metadata and a `bbox` covering, links and
 * assets as nested columns), and `/downloads/datasets.parquet`, one compact row per dataset. DuckDB writes each
 * collection's rows from newline-delimited JSON into a part kept in the build cache (so the nested types are what the
 * documents hold), then joins the parts into the two files.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { RenderContext } from '../../core/api/catalog/resources.ts';
import type { CollectionModel } from '../../core/model.ts';
import { bboxGeometry, describeDatasetBox, renderStacItem, stacStaticPath } from '../../core/api/stac/documents.ts';
import { createGeoMetadata, createGeoParquetCopyOptions } from '../../core/geo/geoparquet.ts';
import { encodeWkb, type BBox, type GeometryType } from '../../core/geo/wkb.ts';
import { datasetPath } from '../../core/site/paths.ts';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';
import type { TreeFile } from '../../core/static-files.ts';
import { CATALOG_FILES, PARQUET_TYPE } from '../../core/constants.ts';

/** The stac-geoparquet version the Items file follows, and its file metadata key. */
const STAC_GEOPARQUET = { key: 'stac-geoparquet', version: '1.0.0' } as const;

/** zstd's level for the downloads, written again at every edit: see BENCHMARKS.md, "Discovery and change outputs". */
const DOWNLOAD_ZSTD_LEVEL = 3;

/**
 * Where a build keeps each collection's rows as Parquet between builds, so that an edit renders its own collection's
 * rows again and DuckDB joins the parts (a columnar copy) instead of parsing every Item's JSON.
 */
export interface DownloadParts {
  /** A folder of the build's cache. */
  dir: string;
  /** Per collection slug, a hash of what its rows are made from: its scope's inputs and the code. */
  keys: Map<string, string>;
}

/** The files of one collection's part: its Items, its datasets, and their extent and geometry types. */
interface PartFiles {
  items: string;
  datasets: string;
  meta: string;
}

/** Writes both downloads of the catalog, from the parts kept in `parts.dir` where they are current, and returns them. */
export async function renderCatalogDownloads(context: RenderContext, parts?: DownloadParts): Promise<TreeFile[]> {
  const scratch = await mkdtemp(join(tmpdir(), 'geoshelf-downloads-'));
  const dir = parts?.dir ?? join(scratch, 'parts');
  await mkdir(dir, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await instance.connect();
  try {
    const made: PartFiles[] = [];
    for (const collection of context.index.model.collections) {
      if (!collection.datasets.some((dataset) => dataset.files.length > 0)) continue;
      const name = parts?.keys.get(collection.slug) ?? collection.slug;
      const files = { items: join(dir, `${name}.items.parquet`), datasets: join(dir, `${name}.datasets.parquet`), meta: join(dir, `${name}.json`) };
      if (!parts || !(await Promise.all(Object.values(files).map(exists))).every(Boolean)) await writePart(connection, context, collection, files, scratch);
      made.push(files);
    }
    if (parts) await removeOtherParts(dir, made);
    if (made.length === 0) return [];
    const metas = await Promise.all(made.map(async (files) => JSON.parse(await readFile(files.meta, 'utf8')) as PartMeta));
    const boxes = metas.flatMap((meta) => (meta.bbox ? [meta.bbox] : []));
    const extent: BBox = boxes.length === 0 ? [-180, -90, 180, 90] : [Math.min(...boxes.map((box) => box[0])), Math.min(...boxes.map((box) => box[1])), Math.max(...boxes.map((box) => box[2])), Math.max(...boxes.map((box) => box[3]))];
    const geo = createGeoMetadata([...new Set(metas.flatMap((meta) => meta.types))].sort(), extent);
    const itemsOut = join(scratch, 'stac-items.parquet');
    const datasetsOut = join(scratch, 'datasets.parquet');
    await connection.run(`COPY (SELECT * FROM ${readParts(made.map((files) => files.items))}) TO ${quoteLiteral(itemsOut)} (${createGeoParquetCopyOptions(geo, { compressionLevel: DOWNLOAD_ZSTD_LEVEL, metadata: { [STAC_GEOPARQUET.key]: JSON.stringify({ version: STAC_GEOPARQUET.version }) } })})`);
    await connection.run(`COPY (SELECT * FROM ${readParts(made.map((files) => files.datasets))}) TO ${quoteLiteral(datasetsOut)} (FORMAT parquet, COMPRESSION zstd)`);
    return [
      { key: CATALOG_FILES.stacItems, body: await readFile(itemsOut), type: PARQUET_TYPE },
      { key: CATALOG_FILES.datasets, body: await readFile(datasetsOut), type: PARQUET_TYPE },
    ];
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(scratch, { recursive: true, force: true });
  }
}

/** A part's extent and geometry types, for the joined file's `geo` metadata. */
interface PartMeta {
  bbox: BBox | null;
  types: GeometryType[];
}

/** Renders one collection's Items and datasets as rows, and writes them as its part. */
async function writePart(connection: DuckDBConnection, context: RenderContext, collection: CollectionModel, files: PartFiles, scratch: string): Promise<void> {
  const items = listItemRows(context, collection);
  const itemsPath = join(scratch, 'items.ndjson');
  await writeFile(itemsPath, items.map((row) => JSON.stringify(row.json)).join('\n'));
  await connection.run(`COPY (SELECT * REPLACE (st_geomfromwkb(from_hex(CAST(geometry AS VARCHAR))) AS geometry, ${castColumns({ ...ITEM_TYPES, datetime: 'TIMESTAMPTZ', created: 'TIMESTAMPTZ', updated: 'TIMESTAMPTZ' })}) FROM ${readNdjson(itemsPath)}) TO ${quoteLiteral(files.items)} (FORMAT parquet, GEOPARQUET_VERSION 'NONE')`);
  const datasetsPath = join(scratch, 'datasets.ndjson');
  await writeFile(datasetsPath, listDatasetRows(context, collection).map((row) => JSON.stringify(row)).join('\n'));
  await connection.run(`COPY (SELECT * REPLACE (${castColumns(DATASET_TYPES)}) FROM ${readNdjson(datasetsPath)}) TO ${quoteLiteral(files.datasets)} (FORMAT parquet)`);
  const boxes = items.flatMap((row) => (row.bbox ? [row.bbox] : []));
  const meta: PartMeta = {
    bbox: boxes.length === 0 ? null : [Math.min(...boxes.map((box) => box.xmin)), Math.min(...boxes.map((box) => box.ymin)), Math.max(...boxes.map((box) => box.xmax)), Math.max(...boxes.map((box) => box.ymax))],
    types: [...new Set(items.flatMap((row) => (row.geometryType ? [row.geometryType] : [])))],
  };
  // Written last: a part whose meta is there is whole.
  await writeFile(files.meta, JSON.stringify(meta));
}

/** The parts as one relation: columns joined by name, nested fields by name too, rows in part order. */
function readParts(paths: string[]): string {
  return `read_parquet([${paths.map(quoteLiteral).join(', ')}], union_by_name = true)`;
}

async function removeOtherParts(dir: string, kept: PartFiles[]): Promise<void> {
  const keep = new Set(kept.flatMap((files) => Object.values(files).map((path) => basename(path))));
  for (const name of await readdir(dir)) if (!keep.has(name)) await rm(join(dir, name), { force: true });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
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

/**
 * The assets without their null fields (`proj:code` of a file whose CRS is unknown). A field that is null in every
 * row of a part would be typed JSON there and text in another part, and the parts would not join.
 */
function withoutNullFields(assets: Record<string, object>): Record<string, object> {
  return Object.fromEntries(Object.entries(assets).map(([key, asset]) => [key, Object.fromEntries(Object.entries(asset).filter(([, value]) => value !== null))]));
}

/**
 * The columns whose type a part with only nulls or empty lists in them would leave to DuckDB's guess (JSON), and
 * the parts would then not join.
 */
const BBOX_TYPE = 'STRUCT(xmin DOUBLE, ymin DOUBLE, xmax DOUBLE, ymax DOUBLE)';
const ITEM_TYPES = { stac_extensions: 'VARCHAR[]', bbox: BBOX_TYPE, description: 'VARCHAR', 'table:row_count': 'BIGINT', 'table:primary_geometry': 'VARCHAR', 'proj:code': 'VARCHAR' };
const DATASET_TYPES = {
  description: 'VARCHAR', tags: 'STRUCT("key" VARCHAR, "values" VARCHAR[])[]', keywords: 'VARCHAR[]', license: 'VARCHAR', doi: 'VARCHAR', citation: 'VARCHAR',
  providers: 'STRUCT("name" VARCHAR, roles VARCHAR[], url VARCHAR)[]', files: 'VARCHAR[]', bbox: BBOX_TYPE, created_at: 'TIMESTAMP', updated_at: 'TIMESTAMP',
};

/** `* REPLACE` casts of columns to their types. */
function castColumns(types: Record<string, string>): string {
  return Object.entries(types).map(([name, type]) => `CAST(${quoteIdentifier(name)} AS ${type}) AS ${quoteIdentifier(name)}`).join(', ');
}

interface ItemRow {
  bbox: { xmin: number; ymin: number; xmax: number; ymax: number } | null;
  geometryType: GeometryType | null;
  json: Record<string, unknown>;
}

/** The latest Item of every file of a collection as a stac-geoparquet row: properties lifted, the footprint as WKB in hex. */
function listItemRows(context: RenderContext, collection: CollectionModel): ItemRow[] {
  const rows: ItemRow[] = [];
  for (const dataset of collection.datasets) {
    for (const file of dataset.files) {
      const { type: _type, stac_version, stac_extensions, id, geometry: _footprint, bbox, properties, links, assets, collection: collectionId } = renderStacItem(context, { collection, dataset, file }, undefined, 'static');
      const geometry = bbox ? bboxGeometry(bbox) : null;
      const box = bbox ? { xmin: bbox[0], ymin: bbox[1], xmax: bbox[2], ymax: bbox[3] } : null;
      rows.push({
        bbox: box,
        geometryType: geometry?.type ?? null,
        json: { stac_version, stac_extensions, id, geometry: geometry ? Buffer.from(encodeWkb(geometry)).toString('hex') : null, bbox: box, ...properties, ...withNulls(properties), links, assets: withoutNullFields(assets), collection: collectionId },
      });
    }
  }
  return rows;
}

/** One row per dataset of a collection: ids, names, tags, what the record says about the data, its box and where to read more. */
function listDatasetRows(context: RenderContext, collection: CollectionModel): Record<string, unknown>[] {
  const base = context.index.settings.baseUrl;
  return collection.datasets.map((dataset) => {
    const box = describeDatasetBox(context.index, dataset);
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
      bbox: box ? { xmin: box[0], ymin: box[1], xmax: box[2], ymax: box[3] } : null,
      created_at: dataset.created_at,
      updated_at: dataset.updated_at,
      page_url: `${base}${datasetPath(collection.slug, dataset.slug)}`,
      api_url: context.links.dataset(collection.slug, dataset.slug),
      stac_url: `${base}${stacStaticPath(collection, dataset)}`,
    };
  });
}
