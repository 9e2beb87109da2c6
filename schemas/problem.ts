import { z } from 'zod';
import { ApiLinkMapSchema } from './common.ts';

/** Error body of catalog routes, served as application/problem+json (RFC 9457). */
export const ProblemSchema = z
  .object({
    type: z.string().describe('URI naming the kind of problem.'),
    title: z.string().describe('Short summary of the kind of problem.'),
    status: z.number().int().describe('HTTP status code.'),
    detail: z.string().optional().describe('What went wrong with this request and how to fix it.'),
    instance: z.string().optional().describe('The path that was requested.'),
    links: ApiLinkMapSchema.optional(),
  })
  .meta({ id: 'Problem' });

/** Error body of catalog routes. */
export type Problem = z.infer<typeof ProblemSchema>;
