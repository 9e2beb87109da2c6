import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCatalogIndex } from '../core/catalog-index.ts';
import { answerCatalogRoute, createRenderContext } from '../core/api/catalog/answer.ts';
import type { RenderContext } from '../core/api/catalog/resources.ts';
import { fileKeyForRoute, resolveApiUrl } from '../core/api/catalog/resolve.ts';
import { serializeJson } from '../core/static-files.ts';
import { loadCatalogModel } from '../generator/build.ts';
import { computeAnswer } from '../server/catalog.ts';
import { get, sampleConfig, sampleManifest, sampleServer } from './helpers/sample.ts';

const SEED = Number(process.env.GEOSHELF_PARITY_SEED ?? 20261122);

function createRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!, chance: (p: number) => next() < p };
}

/** Spells a value the way a user might: other case, accents, stray spaces. */
function respell(value: string, random: ReturnType<typeof createRandom>): string {
  const cased = random.chance(0.5) ? value.toUpperCase() : value;
  const accented = random.chance(0.3) ? cased.replace(/e/g, 'é').replace(/a/g, 'à') : cased;
  return random.chance(0.3) ? `  ${accented} ` : accented;
}

describe(`the server's answers (seed ${SEED})`, () => {
  const server = sampleServer();
  const manifest = sampleManifest();
  let generated: RenderContext;

  beforeAll(async () => {
    const config = sampleConfig();
    const { model } = await loadCatalogModel({ config });
    generated = createRenderContext(createCatalogIndex(model, { baseUrl: config.baseUrl, storageBaseUrl: config.storageBaseUrl }));
  });

  function randomListingUrl(random: ReturnType<typeof createRandom>): string {
    const entries = [...generated.index.collections.values()];
    const entry = random.pick(entries);
    const params: [string, string][] = [];
    const words = entry.collection.datasets.flatMap((dataset) => `${dataset.name} ${Object.values(dataset.tags).flat().join(' ')}`.split(/\W+/)).filter((word) => word.length > 2);
    if (random.chance(0.4) && words.length) {
      const word = random.pick(words);
      const term = random.chance(0.3) ? word.slice(0, Math.max(2, word.length - 3)) : word;
      params.push([random.chance(0.3) ? 'query' : 'search', respell(random.chance(0.2) ? `${term} ${random.pick(words)}` : term, random)]);
    }
    const tagPairs = Object.entries(entry.tags).flatMap(([key, values]) => values.map((value) => [key, value] as const));
    if (random.chance(0.5) && tagPairs.length) {
      const chosen = [random.pick(tagPairs), ...(random.chance(0.3) ? [random.pick(tagPairs)] : [])];
      params.push(['tag_filters', chosen.map(([key, value]) => `${random.chance(0.2) ? key.toUpperCase() : key}:${respell(value, random)}`).join(',')]);
    }
    if (random.chance(0.5)) params.push(['limit', String(random.pick([1, 2, 3, 5, 10, 50, 100]))]);
    if (random.chance(0.4)) params.push(['offset', String(random.pick([0, 0, 1, 2, 5, 50, 100]))]);
    if (random.chance(0.2)) params.push(['include', 'files']);
    if (random.chance(0.2)) params.push(['include_urls', random.pick(['true', 'false'])]);
    if (random.chance(0.2)) params.push(['omit', 'description']);
    params.sort(() => random.next() - 0.5);
    return `/api/collections/${entry.collection.slug}?${new URLSearchParams(params)}`;
  }

  function randomOtherUrl(random: ReturnType<typeof createRandom>): string {
    const entry = random.pick([...generated.index.collections.values()].filter((candidate) => candidate.collection.datasets.length > 0));
    const dataset = random.pick(entry.collection.datasets);
    const file = random.pick(dataset.files);
    const base = `/api/collections/${entry.collection.slug}/datasets/${dataset.slug}`;
    const versions = [...new Set(file.formats.flatMap((link) => link.sources.map((source) => source.version)))];
    return random.pick([
      `${base}?include_urls=${random.pick(['true', 'false'])}`,
      `${base}/files/${file.slug}/schema?column_offset=${random.pick([0, 1, 3, 25])}&column_limit=${random.pick([1, 2, 25, 50])}`,
      `${base}/files/${file.slug}/schema?version=${random.pick(versions)}${random.chance(0.5) ? '&column_limit=2' : ''}`,
      `/api/collections/${entry.collection.slug}/datasets/tags?tag_key=${random.pick([...Object.keys(entry.tags), 'unused'])}`,
      `/api/collections?include=${random.pick(['datasets', 'datasets,files', 'files,datasets'])}`,
      `/api/datasets/${dataset.id}`,
    ]);
  }

  it('equal, byte for byte, what a prebuilt slice holds, or would hold, over a random sample of parameters', async () => {
    const random = createRandom(SEED);
    let prebuilt = 0;
    let computed = 0;
    for (let round = 0; round < 400; round++) {
      const url = random.chance(0.7) ? randomListingUrl(random) : randomOtherUrl(random);
      const parsed = new URL(url, 'http://localhost');
      const resolution = resolveApiUrl(parsed.pathname, parsed.searchParams);
      expect(resolution.ok, url).toBe(true);
      if (!resolution.ok || resolution.route.route === 'openapi') continue;
      const expected = serializeJson(answerCatalogRoute(generated, resolution.route).body);
      const response = await get(server, url);
      expect(response.status, url).toBe(200);
      expect(Buffer.from(await response.arrayBuffer()).equals(expected), url).toBe(true);
      const key = fileKeyForRoute(resolution.route);
      if (key && manifest.files[key]) {
        prebuilt++;
        const file = await readFile(join(sampleConfig().distDir, key));
        expect(file.equals(expected), `${url} → ${key}`).toBe(true);
        const recomputed = computeAnswer(server.snapshot(), parsed.pathname, parsed.searchParams);
        expect(file.equals(serializeJson(recomputed.body)), `${url} computed`).toBe(true);
      } else {
        computed++;
      }
    }
    expect(prebuilt).toBeGreaterThan(40);
    expect(computed).toBeGreaterThan(40);
  });
});
