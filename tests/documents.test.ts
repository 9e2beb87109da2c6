import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { QUERY_DIR } from '../core/constants.ts';
import { resolveApiUrl, type CatalogRoute } from '../core/api/catalog/resolve.ts';
import { DatasetAggregateListSchema, DatasetByIdResponseSchema, DatasetStatsSchema } from '../schemas/datasets.ts';
import { DatasetDetailResponseSchema, DatasetFileResponseSchema, DatasetFileSchemaResponseSchema } from '../schemas/detail.ts';
import { ApiRootSchema, HealthSchema } from '../schemas/discovery.ts';
import { CollectionDatasetsPageSchema, CollectionListSchema, TagsResponseSchema } from '../schemas/listing.ts';
import { ProblemSchema } from '../schemas/problem.ts';
import { sampleConfig, sampleManifest } from './helpers/sample.ts';

const SCHEMAS: Record<Exclude<CatalogRoute['route'], 'openapi'>, z.ZodType> = {
  root: ApiRootSchema,
  health: HealthSchema,
  collections: CollectionListSchema,
  collection: CollectionDatasetsPageSchema,
  tags: TagsResponseSchema,
  dataset: DatasetDetailResponseSchema,
  file: DatasetFileResponseSchema,
  schema: DatasetFileSchemaResponseSchema,
  datasets: DatasetAggregateListSchema,
  'dataset-by-id': DatasetByIdResponseSchema,
  stats: DatasetStatsSchema,
};

/** The URL a key of the tree answers: `a/b/index.json` is /a/b, `a/_query/x=1.json` is /a?x=1. */
function urlForKey(key: string): { pathname: string; query: URLSearchParams } {
  const marker = `/${QUERY_DIR}/`;
  if (key.includes(marker)) {
    const [directory, file] = key.split(marker) as [string, string];
    return { pathname: `/${directory}`, query: new URLSearchParams(file.replace(/\.json$/, '')) };
  }
  return { pathname: `/${key.replace(/\/index\.json$/, '')}`, query: new URLSearchParams() };
}

const apiKeys = Object.keys(sampleManifest().files).filter((key) => key.startsWith('api/') && !key.startsWith('api/openapi/'));

describe('every generated API document', () => {
  it('covers every GET route of the contract', () => {
    const routes = new Set(apiKeys.flatMap((key) => {
      const { pathname, query } = urlForKey(key);
      const resolution = resolveApiUrl(pathname, query);
      return resolution.ok ? [resolution.route.route] : [];
    }));
    expect([...routes].sort()).toEqual(Object.keys(SCHEMAS).sort());
  });

  it('validates against the zod schema of its route, with no field the schema does not declare', async () => {
    const failures: string[] = [];
    for (const key of apiKeys) {
      const document = JSON.parse(await readFile(join(sampleConfig().distDir, key), 'utf8'));
      if (key.startsWith('api/_problems/')) {
        ProblemSchema.parse(document);
        continue;
      }
      const { pathname, query } = urlForKey(key);
      const resolution = resolveApiUrl(pathname, query);
      if (!resolution.ok || resolution.route.route === 'openapi') {
        failures.push(`${key}: does not resolve to a route`);
        continue;
      }
      const result = SCHEMAS[resolution.route.route].safeParse(document);
      if (!result.success) failures.push(`${key}: ${result.error.message.slice(0, 300)}`);
      else if (!isDeepStrictEqual(result.data, document)) failures.push(`${key}: holds fields its schema does not declare`);
    }
    expect(failures).toEqual([]);
  });

  it('is stored under the key its canonical URL maps to', async () => {
    for (const key of apiKeys.filter((candidate) => candidate.includes(`/${QUERY_DIR}/`))) {
      const { pathname, query } = urlForKey(key);
      const document = JSON.parse(await readFile(join(sampleConfig().distDir, key), 'utf8'));
      const self = document.links?.self as string | undefined;
      if (self) expect(self).toBe(`${sampleConfig().baseUrl}${pathname}?${query.toString().replaceAll('+', '%20')}`);
    }
  });
});

describe('the schema route summary', () => {
  it('names why geometries are invalid, as the source metadata does, adding up to the invalid count', async () => {
    const key = 'api/collections/natural-earth/datasets/countries/files/countries-110m/schema/index.json';
    const body = DatasetFileSchemaResponseSchema.parse(JSON.parse(await readFile(join(sampleConfig().distDir, key), 'utf8')));
    const summary = body.schema!.summary;
    expect(summary.invalidGeometryReasons).toEqual(body.schema!.source_metadata!.invalid_geometry_reasons);
    const total = Object.values(summary.invalidGeometryReasons ?? {}).reduce((sum, count) => sum + (count ?? 0), 0);
    expect(total).toBe(summary.invalidGeometryCount);
    expect(summary.invalidGeometryCount).toBeGreaterThan(0);
    expect(summary.qualityCheckPassed).toBe(false);
  });
});
