import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CatalogSnapshot } from './catalog.ts';
import { readCatalogDocument, type RoutePathText } from './mcp-catalog.ts';
import { renderMcpFailure } from './mcp-errors.ts';

/** The catalog documents an agent may read without a tool call: a dataset, and a file's data dictionary. */
export function addResources(server: McpServer, snapshot: () => CatalogSnapshot): void {
  const read = <N extends 'dataset' | 'schema'>(uri: URL, name: N, path: RoutePathText<N>) => {
    try {
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(readCatalogDocument(snapshot(), name, path)) }] };
    } catch (error) {
      throw renderMcpFailure(error, 'resource');
    }
  };
  const value = (variable: string | string[] | undefined) => String(Array.isArray(variable) ? variable[0] : variable ?? '');
  server.registerResource(
    'dataset',
    new ResourceTemplate('geoshelf://collections/{collection}/datasets/{dataset}', { list: undefined }),
    { title: 'A dataset', description: 'The dataset detail document: files, formats, sources and their ids.', mimeType: 'application/json' },
    (uri, { collection, dataset }) => read(uri, 'dataset', { collectionSlug: value(collection), datasetSlug: value(dataset) }),
  );
  server.registerResource(
    'file_schema',
    new ResourceTemplate('geoshelf://collections/{collection}/datasets/{dataset}/files/{file}/schema', { list: undefined }),
    { title: 'A file\'s data dictionary', description: 'The schema document of a file\'s newest version: every column with its statistics.', mimeType: 'application/json' },
    (uri, { collection, dataset, file }) => read(uri, 'schema', { collectionSlug: value(collection), datasetSlug: value(dataset), fileSlug: value(file) }),
  );
}
