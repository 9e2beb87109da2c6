import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The validator of Lighthouse 13's `ard-schema` audit: the ARD conformance test and its JSON Schema, as Lighthouse ships them.
import { ConformanceTester } from 'lighthouse/third-party/ard/ard.js';
import { startGeoshelf, type RunningSite } from './helpers/web-app.ts';

let site: RunningSite;
beforeAll(async () => {
  site = await startGeoshelf();
});
afterAll(async () => site?.close());

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`${site.origin}${path}`);
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

/** Every absolute URL of this deployment that a text names, without trailing punctuation. */
function urlsIn(text: string): string[] {
  const found = text.match(new RegExp(`${site.origin.replaceAll('.', '\\.')}[^\\s\`)"'<>]*`, 'g')) ?? [];
  return [...new Set(found.map((url) => url.replace(/[.,:;]+$/, '')))];
}

/** The status each URL answers a GET with. */
async function statuses(urls: string[]): Promise<Record<string, number>> {
  const answers = await Promise.all(urls.map(async (url) => [url, (await fetch(url)).status] as const));
  return Object.fromEntries(answers);
}

describe('discovery documents point at surfaces that answer', () => {
  it('GET /api links STAC, the STAC API description and OGC features, and every one of its links answers except the unbuilt ones', async () => {
    const root = await getJson<{ links: Record<string, string> }>('/api');
    expect(root.links.stac).toBe(`${site.origin}/stac`);
    expect(root.links.stac_openapi).toBe(`${site.origin}/stac/api/openapi`);
    expect(root.links.features).toBe(`${site.origin}/features/collections`);
    const concrete = Object.entries(root.links).filter(([, href]) => !href.includes('{'));
    const answered = await statuses(concrete.map(([, href]) => href));
    for (const [name, href] of concrete) {
      const status = answered[href];
      // POST-only endpoints answer a GET with 405.
      if (name === 'create_query' || name === 'mcp') expect(status, `${name}: ${href}`).toBe(405);
      else expect(status, `${name}: ${href}`).toBe(200);
    }
  });

  it('the STAC API description named by /api is an OpenAPI document, and the STAC API landing page names it as service-desc', async () => {
    const landing = await getJson<{ links: { rel: string; href: string }[] }>('/stac/api');
    expect(landing.links.find((link) => link.rel === 'service-desc')?.href).toBe(`${site.origin}/stac/api/openapi`);
    const description = await getJson<{ openapi: string; paths: Record<string, unknown> }>('/stac/api/openapi');
    expect(description.openapi).toMatch(/^3\./);
    expect(Object.keys(description.paths)).toContain('/stac/api/search');
  });

  it('every URL in /llms.txt answers, and it shows a STAC and an OGC request', async () => {
    const response = await fetch(`${site.origin}/llms.txt`);
    const text = await response.text();
    const urls = urlsIn(text).filter((url) => !url.includes('{') && !url.includes('…'));
    expect(urls).toEqual(expect.arrayContaining([`${site.origin}/stac`, `${site.origin}/stac/api`, `${site.origin}/features/collections`]));
    const answered = await statuses(urls);
    // POST routes answer GET with 405; everything else must be readable.
    const failing = Object.entries(answered).filter(([url, status]) => status !== 200 && !(status === 405 && (url.endsWith('/api/queries') || url.endsWith('/mcp'))));
    expect(failing).toEqual([]);
  });

  it('the API catalog (RFC 9727) lists /api, /stac/api and /features, and each of its links answers', async () => {
    const catalog = await getJson<{ linkset: { anchor: string; [rel: string]: unknown }[] }>('/.well-known/api-catalog');
    expect(catalog.linkset.map((entry) => entry.anchor)).toEqual([`${site.origin}/api`, `${site.origin}/stac/api`, `${site.origin}/features`]);
    const hrefs = catalog.linkset.flatMap((entry) => [entry.anchor, ...Object.values(entry).flatMap((value) => (Array.isArray(value) ? value.map((link: { href: string }) => link.href) : []))]);
    const answered = await statuses([...new Set(hrefs)]);
    expect(Object.entries(answered).filter(([, status]) => status !== 200)).toEqual([]);
  });

  it('the AI catalog passes the Agentic Resource Discovery conformance test that Lighthouse runs, with no error and no warning', async () => {
    const response = await fetch(`${site.origin}/.well-known/ai-catalog.json`);
    const tester = new ConformanceTester();
    tester.validate_manifest(await response.text(), 'ai-catalog.json');
    expect({ errors: tester.errors, warnings: tester.warnings }).toEqual({ errors: [], warnings: [] });
  });

  it('every entry of the AI catalog answers, and the whole-guide skill links the HTTP, STAC and OGC surfaces', async () => {
    const catalog = await getJson<{ entries: { identifier: string; type: string; url: string; metadata?: Record<string, string> }[] }>('/.well-known/ai-catalog.json');
    expect(catalog.entries.map((entry) => entry.type)).toEqual(expect.arrayContaining(['application/mcp-server-card+json', 'text/markdown; profile="urn:air:agent-skills"']));
    const answered = await statuses(catalog.entries.map((entry) => entry.url));
    expect(Object.entries(answered).filter(([, status]) => status !== 200)).toEqual([]);
    const card = await getJson<{ tools: unknown[] }>(new URL(catalog.entries.find((entry) => entry.type === 'application/mcp-server-card+json')!.url).pathname);
    expect(card.tools.length).toBeGreaterThan(0);
    const guide = catalog.entries.find((entry) => entry.identifier.endsWith(':geoshelf-catalog'));
    expect(Object.keys(guide?.metadata ?? {})).toEqual(expect.arrayContaining(['openapi', 'llms_txt', 'stac', 'stac_api', 'features']));
    const surfaces = await statuses(Object.values(guide!.metadata!));
    expect(Object.entries(surfaces).filter(([, status]) => status !== 200)).toEqual([]);
  });

  it('a dataset page links its STAC Collection, and each file its STAC Item and OGC collection, and they answer', async () => {
    const html = await (await fetch(`${site.origin}/collections/natural-earth/datasets/countries/`)).text();
    const hrefs = [...html.matchAll(/href="([^"]*\/(?:stac|features)\/[^"]*)"/g)].map((match) => new URL(match[1]!.replaceAll('&amp;', '&'), site.origin).href);
    expect(hrefs).toContain(`${site.origin}/stac/natural-earth/countries`);
    expect(hrefs).toContain(`${site.origin}/features/collections/natural-earth.countries.countries-110m`);
    expect(hrefs).toContain(`${site.origin}/stac/natural-earth/countries/countries-110m`);
    const answered = await statuses([...new Set(hrefs)]);
    expect(Object.entries(answered).filter(([, status]) => status !== 200)).toEqual([]);
    const collection = await getJson<{ id: string; type: string }>('/stac/natural-earth/countries');
    expect(collection).toMatchObject({ type: 'Collection', id: 'natural-earth.countries' });
  });
});
