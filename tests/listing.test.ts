import { describe, expect, it } from 'vitest';
import { createCatalogIndex } from '../core/catalog-index.ts';
import type { CatalogModel, DatasetModel } from '../core/model.ts';
import { answerCatalogRoute, createRenderContext } from '../core/api/catalog/answer.ts';
import { serializeJson } from '../core/static-files.ts';
import { selectDatasets } from '../core/api/catalog/listing.ts';
import { resolveApiUrl, urlForRoute, type CatalogRoute } from '../core/api/catalog/resolve.ts';

function dataset(id: number, name: string, tags: DatasetModel['tags'], description = ''): DatasetModel {
  return {
    id, slug: name.toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '').replace(/[^a-z0-9]+/g, '-'), name, description,
    collection_id: 1, tags, created_at: '2026-01-01T00:00:00', updated_at: '2026-01-01T00:00:00', files: [],
  };
}

const datasets = [
  dataset(1, 'São Tomé coastline', { inventory: 'Survey', categories: ['coastlines', 'physical'] }, 'Shoreline of an island state.'),
  dataset(2, 'Coast guard stations', { inventory: 'Survey', categories: ['facilities'] }),
  dataset(3, 'Rivers', { inventory: 'Hydro', categories: ['physical', 'water'] }, 'Rivers that reach the coast.'),
  dataset(4, 'Country borders', { inventory: 'Survey', categories: ['boundaries'] }),
  dataset(5, 'Borders of states', { inventory: 'Hydro', categories: ['boundaries', 'water'] }),
];
const model: CatalogModel = {
  formats: [],
  storageLocations: [],
  collections: [{ id: 1, slug: 'test', name: 'Test', created_at: '2026-01-01T00:00:00', updated_at: '2026-01-01T00:00:00', datasets: [...datasets].sort((a, b) => a.name.localeCompare(b.name)) }],
};
const context = createRenderContext(createCatalogIndex(model, { baseUrl: 'https://x.example', storageBaseUrl: 'https://x.example/data' }));
const entry = context.index.collections.get('test')!;

function names(query: string): string[] {
  const resolution = resolveApiUrl('/api/collections/test', new URLSearchParams(query));
  if (!resolution.ok || resolution.route.route !== 'collection') throw new Error(JSON.stringify(resolution));
  return selectDatasets(entry, resolution.route.params ?? {}).map((item) => item.name);
}

describe('search', () => {
  it('ignores case and accents', () => {
    expect(names('search=SAO TOME')).toEqual(['São Tomé coastline']);
  });

  it('matches word prefixes, and every word must match', () => {
    expect(names('search=coast')).toEqual(['Coast guard stations', 'São Tomé coastline', 'Rivers']);
    expect(names('search=coast physical')).toEqual(['São Tomé coastline', 'Rivers']);
    expect(names('search=coast nowhere')).toEqual([]);
  });

  it('ranks name matches above tag matches above description matches, ties by name then id', () => {
    expect(names('search=borders')).toEqual(['Borders of states', 'Country borders']);
    expect(names('search=water')).toEqual(['Borders of states', 'Rivers']);
  });

  it('treats query as an alias of search, and word order and repeats as irrelevant', () => {
    expect(names('query=physical coast')).toEqual(names('search=coast  physical coast'));
    expect(resolveApiUrl('/api/collections/test', new URLSearchParams('query=a&search=b')).ok).toBe(false);
  });
});

describe('tag filters', () => {
  it('match values of one key as alternatives', () => {
    expect(names('tag_filters=categories:water,categories:facilities')).toEqual(['Borders of states', 'Coast guard stations', 'Rivers']);
  });

  it('require every key to match', () => {
    expect(names('tag_filters=categories:boundaries,inventory:survey')).toEqual(['Country borders']);
  });

  it('ignore case and accents of values, and combine with search', () => {
    expect(names('tag_filters=categories:PHYSICAL&search=rivers')).toEqual(['Rivers']);
  });

  it('list their keys and values on the tags route', () => {
    const answer = answerCatalogRoute(context, { route: 'tags', collectionSlug: 'test' });
    expect((answer.body as { tags: unknown }).tags).toEqual({
      categories: ['boundaries', 'coastlines', 'facilities', 'physical', 'water'],
      inventory: ['Hydro', 'Survey'],
    });
  });
});

describe('keys from the request', () => {
  function answer(path: string, query: string) {
    const resolution = resolveApiUrl(path, new URLSearchParams(query));
    if (!resolution.ok || resolution.route.route === 'openapi') throw new Error(JSON.stringify(resolution));
    return answerCatalogRoute(context, resolution.route);
  }

  it.each(['constructor', 'hasownproperty', 'valueof'])('a tag filter on %s, a property of every object, is a key the collection does not use', (key) => {
    const result = answer('/api/collections/test', `tag_filters=${key}:x`);
    expect(result.status).toBe(400);
    expect((result.body as { detail: string }).detail).toContain(`tag key "${key}" is not used in collection "test"`);
  });

  it.each(['__proto__', 'constructor', 'toString', 'unused'])('tag_key=%s lists no tags', (key) => {
    const result = answer('/api/collections/test/datasets/tags', `tag_key=${key}`);
    expect(result.status).toBe(200);
    expect(new TextDecoder().decode(serializeJson(result.body))).toContain('"tags":{}');
  });

  it('tag_key of a used key lists that key only', () => {
    expect((answer('/api/collections/test/datasets/tags', 'tag_key=inventory').body as { tags: unknown }).tags).toEqual({ inventory: ['Hydro', 'Survey'] });
  });
});

describe('pages', () => {
  it('concatenate to the whole list, with next links until the end', () => {
    const whole = names('');
    const seen: string[] = [];
    let route: CatalogRoute = { route: 'collection', slug: 'test', params: { limit: 2 } };
    for (let page = 0; page < 5; page++) {
      const body = answerCatalogRoute(context, route as Exclude<CatalogRoute, { route: 'openapi' }>).body as { datasets: { name: string }[]; total: number; links: { next?: string; self: string } };
      expect(body.total).toBe(5);
      expect(body.links.self).toBe(urlForRoute('https://x.example', route));
      seen.push(...body.datasets.map((item) => item.name));
      if (!body.links.next) break;
      const next = new URL(body.links.next);
      const resolution = resolveApiUrl(next.pathname, next.searchParams);
      if (!resolution.ok) throw new Error(resolution.detail);
      route = resolution.route;
    }
    expect(seen).toEqual(whole);
  });

  it('past the end hold no datasets but still count the total', () => {
    const body = answerCatalogRoute(context, { route: 'collection', slug: 'test', params: { offset: 50 } }).body as { datasets: unknown[]; total: number; links: Record<string, string> };
    expect(body.datasets).toEqual([]);
    expect(body.total).toBe(5);
    expect(body.links.prev).toBe('https://x.example/api/collections/test');
  });
});

describe('canonical URLs', () => {
  it.each([
    ['limit=50&offset=0&include_urls=false', ''],
    ['offset=null', ''],
    ['search=Coast%20%20physical', 'search=coast%20physical'],
    ['omit=description,description&include=files', 'include=files&omit=description'],
    ['tag_filters=Inventory:SURVEY,categories:b', 'tag_filters=categories%3Ab%2Cinventory%3Asurvey'],
    ['limit=7&offset=14', 'limit=7&offset=14'],
  ])('%s is written as "%s"', (query, canonical) => {
    const resolution = resolveApiUrl('/api/collections/test', new URLSearchParams(query));
    if (!resolution.ok) throw new Error(resolution.detail);
    expect(urlForRoute('', resolution.route)).toBe(`/api/collections/test${canonical ? `?${canonical}` : ''}`);
  });
});
