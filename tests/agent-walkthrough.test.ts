import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EXAMPLE_PLACEHOLDERS } from '../generator/emit/discovery/worked-example.ts';
import { QUERY_ERRORS } from '../query/errors.ts';
import { startGeoshelf, type RunningSite } from './helpers/web-app.ts';

/**
 * An agent that starts from /llms.txt alone: it sends the worked example's requests as they are written there, with
 * only the query_id and query_token of the first answer put in, and gets a first and a second page.
 */

let site: RunningSite;
let llms: string;
let client: Client;

beforeAll(async () => {
  site = await startGeoshelf();
  llms = await (await fetch(`${site.origin}/llms.txt`)).text();
  client = new Client({ name: 'geoshelf-walkthrough', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${site.origin}/mcp`)));
});
afterAll(async () => {
  await client?.close();
  await site?.close();
});

interface Page {
  rows: Record<string, unknown>[];
  has_more: boolean;
  next_offset?: number;
  query_id: string;
  query_token: string;
}

/** The text of a `### heading` subsection of the walkthrough, up to the next heading of any level. */
function subsection(heading: string): string {
  const start = llms.indexOf(`### ${heading}\n`);
  expect(start, `/llms.txt has a "### ${heading}" section`).toBeGreaterThan(-1);
  const rest = llms.slice(start + heading.length + 5);
  return rest.slice(0, rest.search(/^#{2,3} /m));
}

/** The fenced JSON blocks of a text, as written. */
function jsonBlocks(text: string): string[] {
  return [...text.matchAll(/^```json\n(.*?)\n```$/gms)].map((match) => match[1]!);
}

/** The URLs a text names after `METHOD `, in order. */
function requestUrls(text: string, method: 'GET' | 'POST'): string[] {
  return [...text.matchAll(new RegExp(`\`${method} (\\S+)\``, 'g'))].map((match) => match[1]!);
}

/** Puts the first answer's query_id and query_token where the example has placeholders, as an agent would. */
function fillIn(text: string, first: Page): string {
  return text.replaceAll(EXAMPLE_PLACEHOLDERS.queryId, first.query_id).replaceAll(EXAMPLE_PLACEHOLDERS.queryToken, first.query_token);
}

async function postJson(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; json: Page }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, json: (await response.json()) as Page };
}

/** Every absolute URL of this deployment that a text names, without templates or trailing punctuation. */
function concreteUrls(text: string): string[] {
  const found = text.match(new RegExp(`${site.origin.replaceAll('.', '\\.')}[^\\s\`)"'<>]*`, 'g')) ?? [];
  return [...new Set(found.map((url) => url.replace(/[.,:;]+$/, '')))].filter((url) => !url.includes('{') && !url.includes('…'));
}

/** The URLs that do not answer a GET as they should: 200, or 405 for the POST-only endpoints. */
async function failingUrls(urls: string[]): Promise<[string, number][]> {
  const answers = await Promise.all(urls.map(async (url) => [url, (await fetch(url)).status] as [string, number]));
  return answers.filter(([url, status]) => status !== 200 && !(status === 405 && (url.endsWith('/api/queries') || url.endsWith('/mcp'))));
}

/** The HTTP steps of /llms.txt, sent verbatim: the GETs, then the query and its second page. */
async function walkOverHttp() {
  const http = subsection('Over HTTP');
  const [queryBody, pageBody] = jsonBlocks(http);
  const [queryUrl, pageUrl] = requestUrls(http, 'POST');
  expect([queryBody, pageBody, queryUrl, pageUrl].every(Boolean), 'the HTTP walkthrough has two POSTs with JSON bodies').toBe(true);
  const first = await postJson(queryUrl!, queryBody!);
  expect(first.status, JSON.stringify(first.json)).toBe(200);
  const second = await postJson(fillIn(pageUrl!, first.json), pageBody!, { 'X-Service-Query-Token': first.json.query_token });
  expect(second.status, JSON.stringify(second.json)).toBe(200);
  return { http, queryBody: queryBody!, queryUrl: queryUrl!, first: first.json, second: second.json };
}

describe('the worked example of /llms.txt runs as written', () => {
  it('over HTTP: every GET step answers, the dataset detail holds the ids the query uses, and the token fetches rows 5–9', async () => {
    const { http, queryBody, queryUrl, first, second } = await walkOverHttp();
    const gets = requestUrls(http, 'GET');
    expect(gets[0]).toBe(`${site.origin}/api`);
    expect(await failingUrls(gets)).toEqual([]);

    const [reference] = (JSON.parse(queryBody) as { sources: { collection_id: number; dataset_id: number; file_id: number; file_source_id: number }[] }).sources;
    const detailUrl = gets.find((url) => url.includes('/datasets/'))!;
    const detail = await (await fetch(detailUrl)).json() as {
      collection: { id: number };
      dataset: { id: number; files: { id: number; formats: { format: { format_type: string }; sources: { id: number }[] }[] }[] };
    };
    expect(detail.collection.id).toBe(reference!.collection_id);
    expect(detail.dataset.id).toBe(reference!.dataset_id);
    const file = detail.dataset.files.find((candidate) => candidate.id === reference!.file_id);
    const geoparquet = file?.formats.filter((format) => format.format.format_type === 'geoparquet').flatMap((format) => format.sources.map((source) => source.id));
    expect(geoparquet).toContain(reference!.file_source_id);

    expect(first.rows).toHaveLength(5);
    expect(first).toMatchObject({ has_more: true, next_offset: 5 });
    const whole = await postJson(queryUrl, JSON.stringify({ ...JSON.parse(queryBody), limit: 10 }));
    expect(whole.json.rows).toHaveLength(10);
    expect(first.rows).toEqual(whole.json.rows.slice(0, 5));
    expect(second.rows).toEqual(whole.json.rows.slice(5, 10));
  });

  it('over MCP: the tools/call params of /llms.txt find the dataset, give its ids and answer the same two pages', async () => {
    const { first, second } = await walkOverHttp();
    const calls = jsonBlocks(subsection('Over MCP'));
    expect(calls.map((call) => (JSON.parse(call) as { name: string }).name)).toEqual(['search_datasets', 'get_dataset', 'run_query', 'get_query_page']);
    const callVerbatim = async <T>(text: string): Promise<T> => {
      const result = await client.callTool(JSON.parse(text) as { name: string; arguments: Record<string, unknown> }) as CallToolResult;
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      return result.structuredContent as T;
    };
    const found = await callVerbatim<{ datasets: { slug: string }[] }>(calls[0]!);
    const detail = await callVerbatim<{ dataset: { slug: string } }>(calls[1]!);
    expect(found.datasets.map((dataset) => dataset.slug)).toContain(detail.dataset.slug);
    const mcpFirst = await callVerbatim<Page>(calls[2]!);
    expect(mcpFirst.rows).toEqual(first.rows);
    const mcpSecond = await callVerbatim<Page>(fillIn(calls[3]!, mcpFirst));
    expect(mcpSecond.rows).toEqual(second.rows);
  });

  it('the query examples of the README, sent verbatim to the sample, answer rows', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const bodies = [...readme.matchAll(/curl -s localhost:3000\/api\/queries -H 'content-type: application\/json' -d '([^']+)'/g)].map((match) => match[1]!);
    expect(bodies.length).toBeGreaterThanOrEqual(2);
    for (const body of bodies) {
      const response = await fetch(`${site.origin}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const answer = (await response.json()) as { rows?: unknown[] };
      expect(response.status, body).toBe(200);
      expect(answer.rows?.length, body).toBeGreaterThan(0);
    }
  });

  it('lists every query error code with its status where an agent can fetch it', () => {
    const missing = Object.entries(QUERY_ERRORS).filter(([code, { status }]) => !new RegExp(`\`${code}\`[^\\n]*\\(${status}\\)`).test(llms));
    expect(missing.map(([code]) => code)).toEqual([]);
  });
});

describe('the agent skills', () => {
  it('cover finding data, reading a dictionary, querying and paging, and mapping; each SKILL.md matches its digest and every link in it answers', async () => {
    const index = await (await fetch(`${site.origin}/.well-known/agent-skills/index.json`)).json() as {
      skills: { name: string; type: string; url: string; digest: string }[];
    };
    expect(index.skills.map((skill) => skill.name)).toEqual(expect.arrayContaining([
      'geoshelf-find-data', 'geoshelf-read-dictionary', 'geoshelf-query-and-page', 'geoshelf-map-result',
    ]));
    for (const skill of index.skills) {
      const response = await fetch(skill.url);
      expect(response.status, skill.url).toBe(200);
      const body = Buffer.from(await response.arrayBuffer());
      expect(`sha256:${createHash('sha256').update(body).digest('hex')}`, skill.name).toBe(skill.digest);
      const text = body.toString('utf8');
      expect(text.startsWith(`---\nname: ${skill.name}\ndescription: `), skill.name).toBe(true);
      expect(await failingUrls(concreteUrls(text)), skill.name).toEqual([]);
    }
  });

  it('the query-and-page skill holds the same worked example as /llms.txt', async () => {
    const skill = await (await fetch(`${site.origin}/.well-known/agent-skills/geoshelf-query-and-page/SKILL.md`)).text();
    expect(jsonBlocks(skill)).toEqual(jsonBlocks(subsection('Over HTTP')).concat(jsonBlocks(subsection('Over MCP'))));
  });
});
