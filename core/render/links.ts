import { urlForRoute, type CatalogRoute } from '../routes.ts';

/** Builds absolute URLs of catalog routes under one base URL. */
export function createLinker(baseUrl: string) {
  const url = (route: CatalogRoute) => urlForRoute(baseUrl, route);
  return {
    url,
    root: () => `${baseUrl}/api`,
    collection: (collection: string) => url({ route: 'collection', collection, params: {} }),
    tags: (collection: string) => url({ route: 'tags', collection }),
    dataset: (collection: string, dataset: string) => url({ route: 'dataset', collection, dataset }),
    datasetById: (id: number) => url({ route: 'dataset-by-id', id }),
    file: (collection: string, dataset: string, file: string) => url({ route: 'file', collection, dataset, file }),
    schema: (collection: string, dataset: string, file: string) => url({ route: 'schema', collection, dataset, file, params: {} }),
    downloadZip: (collection: string, dataset: string, file: string, sourceId: number) =>
      `${baseUrl}/api/collections/${collection}/datasets/${dataset}/files/${file}/sources/${sourceId}/download-zip`,
  };
}

/** URL builders of one base URL. */
export type Linker = ReturnType<typeof createLinker>;
