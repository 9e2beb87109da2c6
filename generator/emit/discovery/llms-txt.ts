/**
 * `/llms.txt`: the whole guide for agents to this deployment, in Markdown. It lists the collections, walks through the
 * worked example, and points at STAC, OGC API - Features and MCP. Agents read it first; the `geoshelf-catalog` skill
 * is the same text, and /.well-known/api-catalog names it as each API's `service-doc`.
 */
import { API_VERSION, CATALOG_FILES } from '../../../core/constants.ts';
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { MCP_TOOLS } from '../../../core/api/mcp/tools.ts';
import { renderDictionarySection, renderErrorCodesSection, renderFindDataSection, renderMapSection } from './guide-sections.ts';
import { renderWalkthroughSection } from './query-walkthrough.ts';
import { findWorkedExample } from './worked-example.ts';

/** `/llms.txt`: a guide for agents to this API as it is deployed, with the collections it holds and a worked example. */
export function renderLlmsTxt(index: CatalogIndex): string {
  const base = index.settings.baseUrl;
  const example = findWorkedExample(index);
  const collections = index.model.collections
    .map((collection) => `- [${collection.name}](${base}/api/collections/${collection.slug}): ${collection.datasets.length} datasets. ${firstSentence(collection.description)}`)
    .join('\n');
  return `# geoshelf catalog

> A read-only JSON catalog of geospatial datasets. Collections hold datasets; a dataset has files (layers);
> a file comes in formats (GeoParquet, GeoJSON, GeoPackage, …); each format has sources, one stored file per version.
> Every column of every GeoParquet source is described in a data dictionary.

Base URL: ${base}. All catalog routes are GET, need no key, and answer JSON. Errors are
application/problem+json with \`type\`, \`title\`, \`status\` and a \`detail\` that says what to fix.
The OpenAPI ${API_VERSION} document is at ${base}/api/openapi.

## Collections

${collections}

${renderFindDataSection(index, example)}

${renderDictionarySection(index, example)}

## How to get the data

Download the GeoParquet file at a source's \`url\` and analyse it locally (DuckDB, GeoPandas, QGIS). GeoParquet
files carry a \`bbox\` covering column, so a bounding-box filter reads only the row groups it needs.

${renderWalkthroughSection(index, example)}

${renderMapSection(index, example)}

${renderErrorCodesSection()}

## STAC

A STAC 1.1 catalog of the same data, for STAC Browser, pystac-client and QGIS:

- \`GET ${base}/stac\` is a static catalog: a Catalog per collection, a Collection per dataset (id
  \`{collection}.{dataset}\`), an Item per file (id \`{file}\`) whose assets are its stored files with size and
  checksum, whose \`table:columns\` are the data dictionary, and whose older versions are linked with
  \`predecessor-version\`.
- \`GET ${base}/stac/api\` is a STAC API 1.0: \`/collections\`, \`/collections/{id}/items\`, and item search at
  \`/stac/api/search\` (GET or POST) with \`bbox\`, \`intersects\`, \`datetime\`, \`ids\`, \`collections\`, \`q\`
  (free text) and \`sortby\`; follow \`links[rel=next]\`. Its OpenAPI document is ${base}/stac/api/openapi.${stacSearchExample(index)}

## OGC API - Features

\`GET ${base}/features/collections\` lists one collection per file that has a GeoParquet source (its latest version),
id \`{collection}.{dataset}.{file}\`. \`GET ${base}/features/collections/{id}/items\` answers a GeoJSON
FeatureCollection in CRS84: \`limit\` (default 10, at most 10,000), \`bbox\`, \`datetime\` where the file has a time
column, \`{property}=value\` for the properties listed at \`…/queryables\`; follow \`links[rel=next]\`. Feature ids
are the row's position in the file. GDAL reads it as \`ogrinfo OAPIF:${base}/features\`.

## MCP

\`${base}/mcp\` is a Model Context Protocol server (Streamable HTTP, stateless: POST JSON-RPC, JSON answers). Its tools
are read-only: ${Object.values(MCP_TOOLS).map((tool) => `\`${tool.name}\``).join(', ')}. A failed call is a tool
result with \`isError\` and \`{"code", "message"}\` (the codes above, or \`not_found\`/\`invalid_parameter\` for the
catalog). ${base}/.well-known/mcp/server-card.json lists the tools with their input and output schemas.

## Harvesting and search engines

\`${base}/dcat.jsonld\` is the catalog as DCAT-AP 3 (JSON-LD): a \`dcat:Catalog\` with one \`dcat:catalog\` per
collection, each at \`${base}/dcat/{collection}.jsonld\` with its datasets and a \`dcat:Distribution\` per stored file;
follow \`hydra:nextPage\` from the first to read them all.
\`${base}/sitemap.xml\` is a sitemap index of every collection, dataset and file page; each dataset page carries
schema.org \`Dataset\` JSON-LD. For bulk work, \`${base}/${CATALOG_FILES.stacItems}\` holds every latest STAC Item
as stac-geoparquet 1.0 and \`${base}/${CATALOG_FILES.datasets}\` one row per dataset (ids, names, tags, licence, box,
links): \`SELECT * FROM '${base}/${CATALOG_FILES.datasets}'\` in DuckDB. \`${base}/feed.atom\` (and
\`${base}/collections/{collection}/feed.atom\`) is an Atom feed of the datasets and file versions added or updated; a
file's \`/api\` document lists what each version changed as \`version_changes\`.

\`/api\` itself has no \`?q=\` parameter and no \`/items\` route: those belong to \`/stac/api\` and \`/features\`.
`;
}

/** A STAC API search over the first file with bounds, rounded to two decimals. */
function stacSearchExample(index: CatalogIndex): string {
  const file = index.model.collections[0]?.datasets[0]?.files[0];
  const bounds = file?.formats.flatMap((link) => link.sources).find((source) => source.metadata?.bounds)?.metadata?.bounds;
  if (!bounds) return '';
  const box = bounds.map((value) => value.toFixed(2).replace(/\.?0+$/, '')).join(',');
  return `
  Example: \`GET ${index.settings.baseUrl}/stac/api/search?bbox=${box}\``;
}

/** The first sentence of a description, for a one-line summary; the whole text when no sentence ends in it. */
function firstSentence(text: string | undefined): string {
  if (!text) return '';
  const match = /^.*?[.!?](\s|$)/s.exec(text.replace(/\s+/g, ' '));
  return (match ? match[0] : text).trim();
}
