import { z } from 'zod';
import { ApiLinkMapSchema } from './common.ts';

/** Link names `GET /api` must carry (contract 4.1). */
export const API_ROOT_LINKS = [
  'self', 'openapi', 'llms_txt', 'agent_skills', 'api_catalog', 'mcp_server_card', 'ai_catalog', 'mcp', 'features',
  'health', 'collections', 'stac', 'stac_openapi', 'example_collection_datasets', 'create_query', 'query_page',
  'query_bounds', 'query_tile',
] as const;

/** Body of `GET /api`: entry links and parameter hints. */
export const ApiRootSchema = z
  .object({
    title: z.string(),
    description: z.string(),
    links: ApiLinkMapSchema.refine(
      (links) => API_ROOT_LINKS.every((name) => typeof links[name] === 'string'),
      { message: `links must include ${API_ROOT_LINKS.join(', ')}` },
    ),
    hints: z.record(z.string(), z.string()).optional().describe('How to use the main parameters, in prose.'),
  })
  .meta({ id: 'ApiRoot' });

/** Body of `GET /api/health`. */
export const HealthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

/** A source this replica should read from its data folder and cannot: missing, or not readable. */
export const UnreachableSourceSchema = z.object({
  dataset_id: z.number().int(),
  file_id: z.number().int(),
  source_id: z.number().int(),
  url: z.string().describe('The public address of the source; file paths of the server are never shown.'),
});

/** Body of `GET /api/health/ready`, with status 200 when ready and 503 when not. */
export const ReadinessSchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checked_at: z.string().describe('When the sources were last looked at (RFC 3339); a probe gets an answer at most 5 s old.'),
    sources: z.object({
      local: z.number().int().min(0).describe('Sources the catalog stores in the data folder of this replica.'),
      remote: z.number().int().min(0).describe('Sources in object storage (storage locations with backend_type s3 or http), probed one object per location.'),
      unreachable: z.number().int().min(0),
    }),
    unreachable: z.array(UnreachableSourceSchema).max(100).describe('The unreachable sources by id, the first 100.'),
  })
  .meta({ id: 'Readiness' });

/** A source that cannot be read, as readiness names it. */
export type UnreachableSource = z.infer<typeof UnreachableSourceSchema>;
/** Body of `GET /api/health/ready`. */
export type Readiness = z.infer<typeof ReadinessSchema>;

/** Body of `GET /api`. */
export type ApiRoot = z.infer<typeof ApiRootSchema>;

/**
 * Media types the Agentic Resource Discovery (ARD) 1.0 conformance test knows; an entry of any other type is
 * flagged (Lighthouse's `ard-schema` audit then scores 0.9, not 1).
 */
export const AI_CATALOG_ENTRY_TYPES = [
  'application/ai-catalog+json',
  'application/agent-card+json',
  'application/a2a-agent-card+json',
  'application/mcp-server-card+json',
  'application/agent-skills+zip',
  'application/agent-skills+gzip',
  'text/markdown; profile="urn:air:agent-skills"',
  'application/ai-registry',
  'application/ai-registry+json',
] as const;

/** `urn:air:<publisher>:<namespace>:<name>`, the identifier ARD 1.0 asks of every entry. */
export const AI_CATALOG_IDENTIFIER = /^urn:air:([a-zA-Z0-9.-]+)(?::([a-zA-Z0-9._:-]+))?:([a-zA-Z0-9._-]+)$/;

/** One entry of `/.well-known/ai-catalog.json`: a resource an agent can fetch, by reference. */
export const AiCatalogEntrySchema = z
  .object({
    identifier: z.string().regex(AI_CATALOG_IDENTIFIER, 'must be urn:air:<publisher>:<namespace>:<name>'),
    displayName: z.string().min(1),
    type: z.enum(AI_CATALOG_ENTRY_TYPES),
    url: z.url(),
    description: z.string().optional(),
    tags: z.array(z.string()).optional(),
    capabilities: z.array(z.string()).optional(),
    representativeQueries: z.array(z.string()).min(2).max(5).describe('Two to five questions an agent might come with.'),
    version: z.string().optional(),
    metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
  })
  .strict()
  .meta({ id: 'AiCatalogEntry' });

/**
 * Body of `/.well-known/ai-catalog.json`, an Agentic Resource Discovery 1.0 manifest (the schema Lighthouse 13's
 * `ard-schema` audit checks: no property beyond `specVersion`, `host` and `entries`).
 */
export const AiCatalogSchema = z
  .object({
    specVersion: z.literal('1.0'),
    host: z
      .object({ displayName: z.string().min(1), documentationUrl: z.url().optional() })
      .strict()
      .optional(),
    entries: z.array(AiCatalogEntrySchema),
  })
  .strict()
  .meta({ id: 'AiCatalog' });

/** Body of `/.well-known/ai-catalog.json`. */
export type AiCatalog = z.infer<typeof AiCatalogSchema>;
