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

/** Body of `GET /api`. */
export type ApiRoot = z.infer<typeof ApiRootSchema>;
