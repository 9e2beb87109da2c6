import { z } from 'zod';
import { API_VERSION } from '../constants.ts';
import { API_ROUTES, API_TAGS } from './catalog/routes.ts';
import { parameterJsonSchema, type ParamSchemas, type Route, type RouteResponse } from './route-table.ts';

type Json = Record<string, unknown>;

const COMPONENTS = '#/components/schemas/';
type SchemaTarget = 'openapi-3.0' | 'draft-2020-12';

/** What an OpenAPI document describes: one surface's route table and the words around it. */
export interface OpenApiSurface {
  routes: Route[];
  tags: { name: string; description: string }[];
  /** The OpenAPI `info` object (title, version, …). */
  info: Json;
  /** Where the surface is served; its paths are absolute from here. */
  serverUrl: string;
  /** OpenAPI version written: 3.1.0 (the default) or 3.0.3 for clients that read no other. */
  openapi?: '3.1.0' | '3.0.3';
}

/**
 * The OpenAPI document of a surface, assembled from its route table (paths, parameters, statuses) and the zod
 * schemas (every component comes from `z.toJSONSchema`), so nothing is written twice. Components are the
 * registered schemas (`.meta({ id })`) the routes reach, and only those: each surface gets its own.
 */
export function createOpenApiDocument(surface: OpenApiSurface): Json {
  const target = surface.openapi === '3.0.3' ? 'openapi-3.0' : 'draft-2020-12';
  const generated = z.toJSONSchema(z.globalRegistry, { io: 'input', uri: (id) => `${COMPONENTS}${id}`, target }).schemas;
  const paths: Record<string, Json> = {};
  for (const route of surface.routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = describeOperation(route, target);
  }
  const schemas: Json = {};
  for (const id of [...reachableComponents(paths, generated)].sort()) {
    const { $schema: _schema, $id: _id, ...rest } = generated[id] as Json;
    schemas[id] = rest;
  }
  return {
    openapi: surface.openapi ?? '3.1.0',
    info: surface.info,
    servers: [{ url: surface.serverUrl, description: 'This deployment' }],
    tags: surface.tags,
    security: [],
    paths,
    components: { schemas },
  };
}

/** The ids of the components that `root` refers to, directly or through other components. */
function reachableComponents(root: unknown, components: Record<string, unknown>): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith(COMPONENTS)) {
        const id = inner.slice(COMPONENTS.length);
        if (!found.has(id) && Object.hasOwn(components, id)) {
          found.add(id);
          visit(components[id]);
        }
      } else visit(inner);
    }
  };
  visit(root);
  return found;
}

/** The OpenAPI document of `/api`. */
export function createCatalogOpenApiDocument(baseUrl: string): Json {
  return createOpenApiDocument({
    routes: API_ROUTES as Route[],
    tags: API_TAGS,
    serverUrl: baseUrl,
    info: {
      title: 'geoshelf catalog API',
      version: API_VERSION,
      summary: 'Static catalog of geospatial datasets with bounded SQL queries over GeoParquet.',
      description: 'Read-only JSON catalog (collection → dataset → file → format → source) and bounded SQL query resources. Catalog errors are application/problem+json; query errors are QueryError objects. Routes without query parameters ignore any they are given; routes with query parameters answer 400 to an unknown or repeated one.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
  });
}

function describeOperation(route: Route, target: SchemaTarget): Json {
  const parameters = [
    ...describeParameters(route.pathParams, 'path'),
    ...describeParameters(route.query, 'query'),
    ...describeParameters(route.headers, 'header'),
  ];
  const responses: Json = {};
  for (const [status, response] of Object.entries(route.responses)) responses[status] = describeResponse(response, target);
  return {
    operationId: route.id,
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    parameters,
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body, target) } } } } : {}),
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

function describeResponse(response: RouteResponse, target: SchemaTarget): Json {
  if (!response.contentType) return { description: response.description };
  const content: Json = {};
  for (const { contentType, schema } of [{ contentType: response.contentType, schema: response.schema }, ...(response.alternatives ?? [])]) {
    content[contentType] = { schema: schema ? schemaOf(schema, target) : { type: 'string', contentMediaType: contentType } };
  }
  return { description: response.description, content };
}

/** A registered schema as a `$ref` to its component; any other inline. */
function schemaOf(schema: z.ZodType, target: SchemaTarget): Json {
  const id = z.globalRegistry.get(schema)?.id;
  if (id) return { $ref: `${COMPONENTS}${id}` };
  const { $schema: _schema, ...json } = z.toJSONSchema(schema, { io: 'input', target }) as Json;
  return json;
}
