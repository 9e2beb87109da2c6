import type { Problem } from '../../../schemas/problem.ts';

/** Problem kinds and their titles; `type` is `urn:geoshelf:problem:<kind>`, documented in the README. */
export const PROBLEM_KINDS = {
  'invalid-parameter': { status: 400, title: 'Invalid request parameter' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'load-failed': { status: 502, title: 'The resource failed to load' },
  'internal': { status: 500, title: 'Internal error' },
} as const;

/** A kind of Problem. */
export type ProblemKind = keyof typeof PROBLEM_KINDS;

/**
 * Renders a Problem document. Its links always lead back to the API's entry points.
 * @example renderProblem('not-found', 'No collection "x".', 'https://catalog.example.org')
 */
export function renderProblem(kind: ProblemKind, detail: string | undefined, baseUrl: string, instance?: string): Problem {
  const { status, title } = PROBLEM_KINDS[kind];
  return {
    type: `urn:geoshelf:problem:${kind}`,
    title,
    status,
    ...(detail ? { detail } : {}),
    ...(instance ? { instance } : {}),
    links: { api: `${baseUrl}/api`, openapi: `${baseUrl}/api/openapi`, llms_txt: `${baseUrl}/llms.txt` },
  };
}

/** The kind of Problem for a status a route resolution gave. */
export function problemKindForStatus(status: number): ProblemKind {
  return status === 400 ? 'invalid-parameter' : status === 404 ? 'not-found' : status === 405 ? 'method-not-allowed' : status === 502 ? 'load-failed' : 'internal';
}
