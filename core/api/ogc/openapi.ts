import { API_VERSION } from '../../constants.ts';
import { createOpenApiDocument } from '../openapi.ts';
import type { FeatureLayer } from './layers.ts';
import { DEFAULT_FEATURE_LIMIT, MAX_FEATURE_LIMIT } from './params.ts';
import { FEATURES_ROUTES, FEATURES_TAGS, OGC_ROUTES } from './routes.ts';

type Json = Record<string, any>;

/** Where the surface is mounted: the document's server URL ends here and its paths are written from here. */
export const FEATURES_MOUNT = '/features';

/** The items path as OGC API - Features names it, relative to the API's root. */
const ITEMS_PATH = '/collections/{collectionId}/items';

/**
 * Parameters kept once, in `components.parameters`, and referenced by every path: the items parameters that
 * per-collection paths share, and the path parameters. Clients read the page size from the `limit` component.
 */
const SHARED_PARAMETERS = ['collectionId', 'featureId', 'limit', 'bbox', 'bbox-crs', 'datetime', 'after', 'before', 'f', 'If-None-Match'];

/**
 * The parameters that OGC API - Features Part 1 defines, written as its OpenAPI building blocks write them
 * (`core/openapi/parameters/*.yaml`): `bbox` as an array of four or six numbers, form style, not exploded;
 * `limit` with the server's own minimum, maximum and default (Part 1 lets a server choose them). The route
 * table reads `bbox` as text, so its generated schema would say string.
 */
const OGC_PARAMETER_SHAPES: Json = {
  limit: { schema: { type: 'integer', minimum: 1, maximum: MAX_FEATURE_LIMIT, default: DEFAULT_FEATURE_LIMIT }, style: 'form', explode: false },
  bbox: { schema: { type: 'array', oneOf: [{ minItems: 4, maxItems: 4 }, { minItems: 6, maxItems: 6 }], items: { type: 'number' } }, style: 'form', explode: false },
  datetime: { style: 'form', explode: false },
};

/**
 * The OpenAPI 3.0 document of /features (`service-desc` of the landing page), made from the route table and the
 * collections of a build. Its server is `{base_url}/features` and its paths are written from there
 * (`/collections/{collectionId}/items`), as OGC API - Features clients look them up. Besides the generic items
 * path, each collection has its own (`/collections/{id}/items`) that lists its queryables as query parameters:
 * GDAL's OAPIF driver sends `-where name = 'x'` to the server as `?name=x` only when the collection's path declares
 * `name`. `limit` is one component with its default and maximum, which QGIS reads for its page size.
 */
export function createFeaturesOpenApiDocument(baseUrl: string, layers: Iterable<FeatureLayer>): Json {
  const document: Json = createOpenApiDocument({
    routes: FEATURES_ROUTES,
    tags: FEATURES_TAGS,
    serverUrl: `${baseUrl}${FEATURES_MOUNT}`,
    openapi: '3.0.3',
    info: {
      title: 'geoshelf OGC API - Features',
      version: API_VERSION,
      description: `The GeoParquet files of the catalog as OGC API - Features Part 1 collections: GeoJSON in CRS84, paged by feature id, ${DEFAULT_FEATURE_LIMIT} features a page unless limit says otherwise (at most ${MAX_FEATURE_LIMIT}). Each collection has its own items path listing the properties it filters on. Errors are OGC exceptions {code, description}.`,
      license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
    },
  });
  const parameters: Json = {};
  const paths: Json = {};
  for (const [absolute, item] of Object.entries(document.paths as Json)) {
    for (const operation of Object.values(item as Json)) operation.parameters = operation.parameters.map((parameter: Json) => shareParameter(parameter, parameters));
    paths[absolute.slice(FEATURES_MOUNT.length) || '/'] = item;
  }
  const items = paths[ITEMS_PATH].get;
  for (const layer of layers) paths[`/collections/${layer.id}/items`] = { get: describeCollectionItems(layer, items) };
  const schemas = simplifyCompositions(document.components.schemas) as Json;
  return { ...document, paths, components: { schemas, parameters } };
}

/**
 * zod's OpenAPI 3.0 schemas with the two compositions that 3.0 forces on it undone: an `allOf` of one schema alone
 * (an optional registered schema) is that schema, and an `anyOf` of copies of one schema (a tuple's items, as 3.0
 * has no `prefixItems`) is that schema.
 */
function simplifyCompositions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(simplifyCompositions);
  if (value === null || typeof value !== 'object') return value;
  const { allOf, anyOf, ...rest } = value as Json;
  const simplified = Object.fromEntries(Object.entries(rest).map(([key, inner]) => [key, simplifyCompositions(inner)]));
  if (Array.isArray(allOf) && allOf.length === 1 && Object.keys(rest).length === 0) return simplifyCompositions(allOf[0]);
  if (Array.isArray(anyOf) && anyOf.length > 0 && anyOf.every((member) => JSON.stringify(member) === JSON.stringify(anyOf[0]))) return { ...(simplifyCompositions(anyOf[0]) as Json), ...simplified };
  return { ...simplified, ...(allOf ? { allOf: simplifyCompositions(allOf) } : {}), ...(anyOf ? { anyOf: simplifyCompositions(anyOf) } : {}) };
}

/** A parameter as a reference to its component, which it becomes on first sight; other parameters as they are. */
function shareParameter(parameter: Json, components: Json): Json {
  const name = String(parameter.name);
  if (!SHARED_PARAMETERS.includes(name)) return parameter;
  components[name] ??= { ...parameter, ...OGC_PARAMETER_SHAPES[name] };
  return { $ref: `#/components/parameters/${name}` };
}

/** The items operation of one collection: the shared parameters, then one equality parameter per queryable. */
function describeCollectionItems(layer: FeatureLayer, generic: Json): Json {
  const shared = (generic.parameters as Json[]).filter((parameter) => parameter.$ref !== '#/components/parameters/collectionId');
  const queryables = [...layer.queryables.values()].map(({ name, type }) => ({
    name, in: 'query', required: false, description: `Only features whose ${name} equals this value (${type}).`, schema: { type },
  }));
  const title = `${layer.dataset.name}: ${layer.file.name}`;
  return {
    operationId: `${OGC_ROUTES.getFeatures.id}.${layer.id}`,
    tags: generic.tags,
    summary: `Features of ${title}`.slice(0, 120),
    description: `One page of the features of ${title}, as ${ITEMS_PATH} answers for this collection; each property parameter keeps the features whose property equals its value.`,
    parameters: [...shared, ...queryables],
    responses: generic.responses,
  };
}
