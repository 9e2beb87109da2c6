import { z } from 'zod';
import { API_VERSION } from '../../core/constants.ts';
import { API_ROUTES, API_TAGS } from '../../core/api/catalog/routes.ts';
import { parameterJsonSchema, type ParamSchemas, type Route, type RouteResponse } from '../../core/api/route-table.ts';

type Json = Record<string, unknown>;

const COMPONENTS = '#/components/schemas/';

/**
 * The OpenAPI 3.1 document of the API, assembled from the route table (paths, parameters, statuses) and the zod
 * schemas (every component comes from `z.toJSONSchema`), so nothing is written twice.
 */
export function createOpenApiDocument(baseUrl: string): Json {
  const generated = z.toJSONSchema(z.globalRegistry, { io: 'input', uri: (id) => `${COMPONENTS}${id}` }).schemas;
  const schemas: Json = {};
  for (const [id, schema] of Object.entries(generated).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const { $schema: _schema, $id: _id, ...rest } = schema as Json;
    schemas[id] = rest;
  }
  const paths: Record<string, Json> = {};
  for (const route of API_ROUTES as Route[]) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = describeOperation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'geoshelf catalog API',
      version: API_VERSION,
      summary: 'Static catalog of geospatial datasets with bounded SQL queries over GeoParquet.',
      description: 'Read-only JSON catalog (collection → dataset → file → format → source) and bounded SQL query resources. Catalog errors are application/problem+json; query errors are QueryError objects. Routes without query parameters ignore any they are given; routes with query parameters answer 400 to an unknown or repeated one.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: baseUrl, description: 'This deployment' }],
    tags: API_TAGS,
    security: [],
    paths,
    components: { schemas },
  };
}

function describeOperation(route: Route): Json {
  const parameters = [
    ...describeParameters(route.pathParams, 'path'),
    ...describeParameters(route.query, 'query'),
    ...describeParameters(route.headers, 'header'),
  ];
  const responses: Json = {};
  for (const [status, response] of Object.entries(route.responses)) responses[status] = describeResponse(response);
  return {
    operationId: route.id,
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    parameters,
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body) } } } } : {}),
    responses,
  };
}

function describeParameters(schemas: ParamSchemas | undefined, place: 'path' | 'query' | 'header'): Json[] {
  return Object.entries(schemas ?? {}).map(([name, schema]) => {
    const { description, ...json } = parameterJsonSchema(schema);
    const required = place === 'path' || (place === 'header' && !schema.safeParse(undefined).success);
    return { name, in: place, required, ...(description ? { description } : {}), schema: json };
  });
}

function describeResponse(response: RouteResponse): Json {
  if (!response.contentType) return { description: response.description };
  const schema = response.schema ? schemaOf(response.schema) : { type: 'string', contentMediaType: response.contentType };
  return { description: response.description, content: { [response.contentType]: { schema } } };
}

/** A registered schema as a `$ref` to its component; any other inline. */
function schemaOf(schema: z.ZodType): Json {
  const id = z.globalRegistry.get(schema)?.id;
  if (id) return { $ref: `${COMPONENTS}${id}` };
  const { $schema: _schema, ...json } = z.toJSONSchema(schema, { io: 'input' }) as Json;
  return json;
}
