import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../core/api/catalog/routes.ts';
import type { Route } from '../core/api/route-table.ts';
import { API_ROOT_LINKS } from '../schemas/discovery.ts';
import { readSampleJson } from './helpers/sample.ts';

const document = await readSampleJson<Record<string, any>>('api/openapi/index.json');

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1.0 for API version 1.0.0', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
  });

  it('passes the recommended lint rules without a single warning', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
    expect(problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)).toEqual([]);
  });

  it('describes every catalog route of the contract, the query routes, readiness and download-zip', () => {
    expect(Object.keys(document.paths).sort()).toEqual([
      '/api',
      '/api/collections',
      '/api/collections/{collectionSlug}/datasets/tags',
      '/api/collections/{collectionSlug}/datasets/{datasetSlug}',
      '/api/collections/{collectionSlug}/datasets/{datasetSlug}/files/{fileSlug}',
      '/api/collections/{collectionSlug}/datasets/{datasetSlug}/files/{fileSlug}/schema',
      '/api/collections/{collectionSlug}/datasets/{datasetSlug}/files/{fileSlug}/sources/{sourceId}/download-zip',
      '/api/collections/{slug}',
      '/api/datasets',
      '/api/datasets/stats',
      '/api/datasets/{id}',
      '/api/health',
      '/api/health/ready',
      '/api/openapi',
      '/api/queries',
      '/api/queries/{query_id}/bounds',
      '/api/queries/{query_id}/download.{format}',
      '/api/queries/{query_id}/pages',
      '/api/queries/{query_id}/tiles/{z}/{x}/{y}.mvt',
      '/api/queries/{query_id}/tileset',
    ]);
  });

  it('takes its component schemas from the zod schemas, strict where the contract forbids extra properties', () => {
    const schemas = document.components.schemas;
    expect(schemas.QueryRequest.additionalProperties).toBe(false);
    expect(schemas.QueryRequest.properties.sources.maxItems).toBe(8);
    expect(schemas.QueryResult.additionalProperties).toBe(false);
    expect(schemas.Dataset.additionalProperties).toBeUndefined();
    expect(schemas.FormatType.enum).toEqual(['geoparquet', 'pmtiles', 'geopackage', 'shapefile', 'geojson', 'file_geodatabase']);
    expect(API_ROOT_LINKS.length).toBe(18);
  });

  describe.each((API_ROUTES as Route[]).map((route) => [`${route.method} ${route.path}`, route] as const))('%s', (_, route) => {
    const operation = document.paths[route.path]?.[route.method.toLowerCase()];

    it('appears under its operationId', () => {
      expect(operation?.operationId).toBe(route.id);
    });

    it('lists every parameter of the route table, where the table puts it', () => {
      const expected = [
        ...Object.keys(route.pathParams ?? {}).map((name) => `path ${name}`),
        ...Object.keys(route.query ?? {}).map((name) => `query ${name}`),
        ...Object.keys(route.headers ?? {}).map((name) => `header ${name}`),
      ];
      expect(operation.parameters.map((parameter: { in: string; name: string }) => `${parameter.in} ${parameter.name}`)).toEqual(expected);
      for (const parameter of operation.parameters) expect(parameter.description, parameter.name).toBeTruthy();
    });

    it('answers with every status it declares, and no other', () => {
      expect(Object.keys(operation.responses)).toEqual(Object.keys(route.responses));
    });
  });

  it('says that routes without query parameters ignore them, and documents the 400 of those that have some', () => {
    for (const route of API_ROUTES as Route[]) {
      if (route.method !== 'GET' || route.tag !== 'catalog') continue;
      const operation = document.paths[route.path].get;
      if (Object.keys(route.query ?? {}).length === 0) expect(operation.description, route.id).toContain('Query parameters are ignored');
      else expect(operation.responses[400], route.id).toBeDefined();
    }
  });
});
