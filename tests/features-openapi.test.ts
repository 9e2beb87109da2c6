import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { OGC_ROUTES } from '../core/api/ogc/routes.ts';
import { ROOT } from './helpers/catalog.ts';
import { get, sampleConfig, sampleServer } from './helpers/sample.ts';

const OGC_PARTS = join(ROOT, '..', 'shared', 'spec-schemas', 'ogcapi-features', 'core', 'openapi', 'ogcapi-features-1-oas30.yaml');
const hasParts = existsSync(OGC_PARTS);
if (!hasParts) console.warn(`features-openapi: ${OGC_PARTS} is absent, so the parameters are not compared with the OGC API - Features building blocks`);

const server = sampleServer();
afterAll(() => server.close());

const getJson = async (path: string) => (await get(server, path)).json() as Promise<any>;
const document = await getJson('/features/api');
const { collections } = await getJson('/features/collections');
const COUNTIES = 'us-census.us-boundaries.counties';

/** A parameter of the document with its `$ref` followed. */
const resolve = (parameter: { $ref?: string }): Record<string, any> => (parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop()!] : parameter);

describe('the OpenAPI document of /features', () => {
  it('is served from {base_url}/features, with the paths of Part 1 written from there', () => {
    expect(document.openapi).toBe('3.0.3');
    expect(document.servers[0].url).toBe(`${sampleConfig().baseUrl}/features`);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining([
      '/', '/conformance', '/api', '/collections', '/collections/{collectionId}', '/collections/{collectionId}/queryables',
      '/collections/{collectionId}/items', '/collections/{collectionId}/items/{featureId}',
    ]));
  });

  it('passes the recommended lint rules, but the one asking every operation for a 4XX answer', async () => {
    // The landing page, conformance, API and collection list take no parameter and name no resource: no 4XX is possible.
    const config = await createConfig({ extends: ['recommended'], rules: { 'operation-4xx-response': 'off' } });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'features.json', config });
    expect(problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)).toEqual([]);
  });

  it('declares the page size in the limit component: 10 by default, and a larger limit served as the maximum', () => {
    const limit = document.components.parameters.limit;
    expect(limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: 10_000, default: 10 });
    expect(document.paths['/collections/{collectionId}/items'].get.parameters).toContainEqual({ $ref: '#/components/parameters/limit' });
    const read = OGC_ROUTES.getFeatures.parseQuery(new URLSearchParams({ limit: String(limit.schema.maximum * 2) }));
    expect(read).toEqual({ ok: true, value: { limit: limit.schema.maximum } });
  });

  it('gives every collection its own items path, listing its queryables as query parameters', async () => {
    for (const { id } of collections) {
      const operation = document.paths[`/collections/${id}/items`]?.get;
      expect(operation, id).toBeDefined();
      const parameters = operation.parameters.map(resolve);
      expect(parameters.filter((parameter: { in: string }) => parameter.in === 'path'), id).toEqual([]);
      expect(parameters.map((parameter: { name: string }) => parameter.name), id).toContain('limit');
      const queryables = await getJson(`/features/collections/${id}/queryables`);
      const declared = Object.fromEntries(parameters.filter((parameter: { name: string }) => Object.hasOwn(queryables.properties, parameter.name)).map((parameter: any) => [parameter.name, parameter.schema.type]));
      expect(declared, id).toEqual(Object.fromEntries(Object.entries(queryables.properties).map(([name, property]: [string, any]) => [name, property.type])));
    }
    expect(Object.keys(document.paths).filter((path) => /^\/collections\/[^{/]+\/items$/.test(path))).toHaveLength(collections.length);
  });

  it('is made once per build: the same bytes twice', async () => {
    const [first, second] = await Promise.all([get(server, '/features/api'), get(server, '/features/api')]);
    expect(first.headers.get('etag')).toBe(second.headers.get('etag'));
  });
});

describe.skipIf(!hasParts)('the parameters of /features next to the OGC API - Features building blocks', () => {
  const parts = hasParts ? (parseYaml(readFileSync(OGC_PARTS, 'utf8')) as any).components.parameters : {};

  it.each(['bbox', 'collectionId', 'datetime', 'featureId', 'limit'])('%s is declared where and how Part 1 declares it', (name) => {
    const official = parts[name];
    const ours = document.components.parameters[name];
    expect(ours).toBeDefined();
    for (const key of ['name', 'in', 'required', 'style', 'explode']) expect(ours[key], key).toEqual(official[key]);
    // Path ids may be narrower than text (Part 1 declares any string); query parameters keep the type.
    if (official.in === 'query') expect(ours.schema.type).toBe(official.schema.type);
    else expect(['string', 'integer']).toContain(ours.schema.type);
  });

  it('bbox is the same array of four or six numbers', () => {
    expect(document.components.parameters.bbox.schema).toEqual(parts.bbox.schema);
  });

  it('limit changes only the minimum, maximum and default that Part 1 lets a server choose', () => {
    const { minimum, maximum, default: initial } = document.components.parameters.limit.schema;
    expect(minimum).toBeGreaterThanOrEqual(1);
    expect(initial).toBeGreaterThanOrEqual(minimum);
    expect(maximum).toBeGreaterThanOrEqual(initial);
  });
});

describe('collection extents across the antimeridian', () => {
  it('give the US counties an overall box from -180° to 180° first, then the precise box from Guam east to the Virgin Islands', async () => {
    const { extent } = await getJson(`/features/collections/${COUNTIES}`);
    const [overall, precise] = extent.spatial.bbox;
    expect(extent.spatial.bbox).toHaveLength(2);
    expect(overall[0]).toBe(-180);
    expect(overall[2]).toBe(180);
    expect(precise.map(Math.round)).toEqual([145, -14, -65, 71]);
    expect([overall[1], overall[3]]).toEqual([precise[1], precise[3]]);
  });

  it('write every first box west ≤ east, the one box that clients reading one box read', () => {
    for (const { id, extent } of collections) {
      const [first, ...rest] = extent.spatial.bbox;
      expect(first[0], id).toBeLessThanOrEqual(first[2]);
      expect(rest.every((box: number[]) => box[0]! > box[2]!), id).toBe(true);
    }
  });
});
