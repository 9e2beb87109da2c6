import { CATALOG_FILES, DEFAULT_COLUMN_LIMIT, DEFAULT_LIST_LIMIT, MAX_COLUMN_LIMIT } from '../../constants.ts';
import type { ApiRoot } from '../../../schemas/discovery.ts';
import type { RenderContext } from './resources.ts';

/** `GET /api`: every entry link of the contract, the query templates, and hints on parameters. */
export function renderApiRoot(context: RenderContext): ApiRoot {
  const base = context.index.settings.baseUrl;
  const example = context.index.model.collections[0];
  return {
    title: 'geoshelf catalog API',
    description:
      'Read-only catalog of geospatial datasets: collections, datasets, files (layers), formats, sources and column data dictionaries, plus bounded SQL queries over GeoParquet sources.',
    links: {
      self: `${base}/api`,
      openapi: `${base}/api/openapi`,
      llms_txt: `${base}/llms.txt`,
      agent_skills: `${base}/.well-known/agent-skills/index.json`,
      api_catalog: `${base}/.well-known/api-catalog`,
      mcp_server_card: `${base}/.well-known/mcp/server-card.json`,
      ai_catalog: `${base}/.well-known/ai-catalog.json`,
      mcp: `${base}/mcp`,
      features: `${base}/features/collections`,
      health: `${base}/api/health`,
      collections: `${base}/api/collections`,
      stac: `${base}/stac`,
      stac_openapi: `${base}/stac/api/openapi`,
      dcat: `${base}/${CATALOG_FILES.dcat}`,
      stac_items_parquet: `${base}/${CATALOG_FILES.stacItems}`,
      datasets_parquet: `${base}/${CATALOG_FILES.datasets}`,
      sitemap: `${base}/${CATALOG_FILES.sitemap}`,
      example_collection_datasets: example ? context.links.collection(example.slug) : `${base}/api/collections`,
      create_query: `${base}/api/queries`,
      query_page: `${base}/api/queries/{query_id}/pages`,
      query_bounds: `${base}/api/queries/{query_id}/bounds`,
      query_tile: `${base}/api/queries/{query_id}/tiles/{z}/{x}/{y}.mvt`,
      query_download: `${base}/api/queries/{query_id}/download.{format}`,
    },
    hints: {
      collection_datasets:
        `GET /api/collections/{slug} lists datasets ${DEFAULT_LIST_LIMIT} at a time. Parameters: search (alias query), tag_filters, limit, offset, include=files, include_urls=true, omit=description.`,
      search: 'search matches every word, as a whole word or a word prefix, in dataset names, slugs, tags, file names and descriptions; case and accents are ignored. Results are ranked; ties go by name, then id.',
      tag_filters: 'tag_filters=key:value[,key:value…]; values of one key match any of them, different keys must all match. GET /api/collections/{slug}/datasets/tags lists keys and values.',
      schema: `GET …/files/{file}/schema returns the data dictionary of the newest schema-capable version; version selects another; column_offset/column_limit (1–${MAX_COLUMN_LIMIT}, default ${DEFAULT_COLUMN_LIMIT}) page the columns.`,
      downloads: 'Download GeoParquet files from the url of a source (file metadata route, or dataset detail with include_urls=true) for bulk analysis.',
      queries: 'POST /api/queries {sources: [{alias, collection_id, dataset_id, file_id, file_source_id}], sql, limit} runs one bounded SELECT over GeoParquet sources (aliases are the table names) and returns a page with query_token. Send the token in X-Service-Query-Token to POST …/pages {offset, page_size}, GET …/bounds and GET …/tiles/{z}/{x}/{y}.mvt.',
      query_formats: 'Send Accept: application/vnd.apache.arrow.stream to POST /api/queries or …/pages for the page as an Arrow IPC stream (geometries as GeoArrow WKB; the page fields as X-Geoshelf-* headers). GET …/download.parquet, .geojson or .csv (the query_download template) answers the whole result as GeoParquet 1.1, GeoJSON or CSV, up to GEOSHELF_QUERY_DOWNLOAD_MAX_ROWS rows; the token goes in X-Service-Query-Token or ?token=.',
      stac: 'GET /stac is a static STAC 1.1 catalog: a Catalog per collection, a Collection per dataset, an Item per file with its assets, data dictionary (table extension) and versions. GET /stac/api is a STAC API 1.0 (item search with bbox, intersects, datetime, ids, collections, q and sortby); its OpenAPI document is the stac_openapi link.',
      features: 'GET /features/collections lists OGC API - Features collections, one per file with a GeoParquet source, id {collection}.{dataset}.{file}; GET /features/collections/{id}/items answers GeoJSON in CRS84 with limit, bbox, datetime and equality filters on the queryables, paged by next links. GDAL/QGIS read it as OAPIF.',
      catalog_downloads: `GET /${CATALOG_FILES.stacItems} is every latest STAC Item as stac-geoparquet 1.0 (GeoParquet 1.1, properties as columns); GET /${CATALOG_FILES.datasets} is one row per dataset with its ids, names, tags, licence, box and links. Read them with DuckDB, GDAL or pandas.`,
      mcp: 'POST /mcp speaks the Model Context Protocol (Streamable HTTP, stateless, JSON responses): read-only tools to list collections and tags, search datasets, read a dataset or a file with its data dictionary, run a query and page it, and resources for datasets and dictionaries. /.well-known/mcp/server-card.json lists the tools with their schemas.',
    },
  };
}
