import { SERVICE_ROUTES } from './routes.ts';
import { urlForRoute, type CatalogRoute } from './resolve.ts';

/** Builds absolute URLs of catalog routes under one base URL. */
export function createLinker(baseUrl: string) {
  const url = (route: CatalogRoute) => urlForRoute(baseUrl, route);
  return {
    url,
    root: () => url({ route: 'root' }),
    collections: () => url({ route: 'collections' }),
    datasets: () => url({ route: 'datasets' }),
    stats: () => url({ route: 'stats' }),
    collection: (collection: string) => url({ route: 'collection', slug: collection }),
    tags: (collection: string) => url({ route: 'tags', collectionSlug: collection }),
    dataset: (collection: string, dataset: string) => url({ route: 'dataset', collectionSlug: collection, datasetSlug: dataset }),
    datasetById: (id: number) => url({ route: 'dataset-by-id', id }),
    file: (collection: string, dataset: string, file: string) => url({ route: 'file', collectionSlug: collection, datasetSlug: dataset, fileSlug: file }),
    schema: (collection: string, dataset: string, file: string) => url({ route: 'schema', collectionSlug: collection, datasetSlug: dataset, fileSlug: file }),
    downloadZip: (collection: string, dataset: string, file: string, sourceId: number) =>
      `${baseUrl}${SERVICE_ROUTES.getSourceArchive.fillPath({ collectionSlug: collection, datasetSlug: dataset, fileSlug: file, sourceId })}`,
  };
}

/** URL builders of one base URL. */
export type Linker = ReturnType<typeof createLinker>;
