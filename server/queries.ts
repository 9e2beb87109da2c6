import type { H3 } from 'h3';
import { queryError } from './errors.ts';

/**
 * The query routes. The query service (issue 4) is not built yet, so every query route answers 503 with the
 * code `query_service_unavailable`, which the contract allows and clients already handle.
 */
export function registerQueryRoutes(app: H3): void {
  app.all('/api/queries', unavailable);
  app.all('/api/queries/**', unavailable);
}

function unavailable(): never {
  throw queryError(503, 'query_service_unavailable', 'This deployment does not run the query service yet. Download the GeoParquet file from a source url instead.', { 'retry-after': '3600' });
}
