/**
 * `/.well-known/api-catalog`: the RFC 9727 API catalog, a linkset with one entry per API of this deployment (the
 * catalog API, the STAC API, OGC API - Features), each linking its OpenAPI description, /llms.txt as its
 * documentation and the health route. Read by API discovery clients and by agents that start from a host name.
 */
import type { CatalogIndex } from '../../../core/catalog-index.ts';

/** One linkset entry: an API's root, its OpenAPI description (of the given OpenAPI version), its docs and its status. */
interface ApiCatalogEntry {
  anchor: string;
  'service-desc': { href: string; type: string }[];
  'service-doc': { href: string; type: string }[];
  status: { href: string; type: string }[];
}

/** The API catalog document, served as `application/linkset+json`. */
export function renderApiCatalog(index: CatalogIndex): { linkset: ApiCatalogEntry[] } {
  const base = index.settings.baseUrl;
  const entry = (anchor: string, description: string, openApiVersion: string): ApiCatalogEntry => ({
    anchor: `${base}${anchor}`,
    'service-desc': [{ href: `${base}${description}`, type: `application/vnd.oai.openapi+json;version=${openApiVersion}` }],
    'service-doc': [{ href: `${base}/llms.txt`, type: 'text/plain' }],
    status: [{ href: `${base}/api/health`, type: 'application/json' }],
  });
  return {
    linkset: [
      entry('/api', '/api/openapi', '3.1'),
      entry('/stac/api', '/stac/api/openapi', '3.1'),
      entry('/features', '/features/api', '3.0'),
    ],
  };
}
