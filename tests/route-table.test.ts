import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as constants from '../core/constants.ts';
import { fileKeyForRoute, resolveApiUrl } from '../core/api/catalog/resolve.ts';
import { API_ROUTES, CATALOG_ROUTES, QUERY_ROUTES, QUERY_TOKEN_HEADER } from '../core/api/catalog/routes.ts';
import { parameterJsonSchema, type Route } from '../core/api/route-table.ts';
import { MapConfigurationSchema } from '../schemas/query.ts';
import { ROOT } from './helpers/catalog.ts';

const routes = API_ROUTES as Route[];
const catalogRoutes = Object.values(CATALOG_ROUTES) as Route[];
const takesQuery = (route: Route) => Object.keys(route.query ?? {}).length > 0;
const QUERY_ID = 'abcdefghij0123456789_-';

describe('the route table', () => {
  it('gives every route a distinct operationId and every path placeholder a parameter schema, and no other', () => {
    expect(new Set(routes.map((route) => route.id)).size).toBe(routes.length);
    for (const route of routes) {
      const placeholders = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      expect(Object.keys(route.pathParams ?? {}), route.id).toEqual(placeholders);
    }
  });

  it('describes every parameter', () => {
    for (const route of routes) {
      for (const schema of [route.pathParams, route.query, route.headers].flatMap((schemas) => Object.values(schemas ?? {}))) {
        expect(parameterJsonSchema(schema).description, route.id).toBeTruthy();
      }
    }
  });

  it('declares every status a catalog route can answer', () => {
    for (const route of catalogRoutes) {
      const statuses = Object.keys(route.responses).map(Number);
      expect(statuses, route.id).toEqual(expect.arrayContaining([200, 304, 404]));
      expect(statuses.includes(400), route.id).toBe(takesQuery(route) || route.invalidPathStatus === 400);
    }
  });

  it('takes its limits and defaults from core/constants.ts', () => {
    const json = (schema: Parameters<typeof parameterJsonSchema>[0]) => parameterJsonSchema(schema);
    expect(json(CATALOG_ROUTES.collection.query!.limit).default).toBe(constants.DEFAULT_LIST_LIMIT);
    expect(json(CATALOG_ROUTES.schema.query!.column_limit).anyOf).toContainEqual(expect.objectContaining({ maximum: constants.MAX_COLUMN_LIMIT }));
    const paged = CATALOG_ROUTES.schema.parseQuery(new URLSearchParams('column_offset=3'));
    expect(paged).toEqual({ ok: true, value: { column_offset: 3, column_limit: constants.DEFAULT_COLUMN_LIMIT } });
  });

  it('names the token header and parameter that map_configuration tells map clients to use', () => {
    expect(MapConfigurationSchema.shape.token_header.value).toBe(QUERY_TOKEN_HEADER);
    expect(Object.keys(QUERY_ROUTES.getQueryTile.query!)).toEqual([MapConfigurationSchema.shape.token_query_parameter.value]);
    expect(Object.keys(QUERY_ROUTES.getQueryBounds.query!)).toEqual([MapConfigurationSchema.shape.token_query_parameter.value]);
  });
});

describe('query route declarations', () => {
  it('give h3 patterns, the tile one matching {y}.mvt', () => {
    expect(Object.values(QUERY_ROUTES).map((route) => `${route.method} ${route.h3Path}`)).toEqual([
      'POST /api/queries',
      'POST /api/queries/:query_id/pages',
      'GET /api/queries/:query_id/bounds',
      'GET /api/queries/:query_id/tiles/:z/:x/:y.mvt',
      'GET /api/queries/:query_id/tileset',
      'GET /api/queries/:query_id/download.:format',
    ]);
  });

  it('read canonical tile addresses', () => {
    expect(QUERY_ROUTES.getQueryTile.parsePath({ query_id: QUERY_ID, z: '3', x: '0', y: '7' })).toEqual({ ok: true, value: { query_id: QUERY_ID, z: 3, x: 0, y: 7 } });
  });

  it.each([
    ['z', '0x1'], ['x', '1e0'], ['y', '+1'], ['z', '01'], ['x', ' 1'], ['y', '1.0'], ['z', '25'], ['y', '3.mvt'], ['x', ''], ['query_id', 'short'], ['query_id', 'a'.repeat(65)],
  ])('refuse %s = "%s", naming the parameter', (name, text) => {
    const raw = { query_id: QUERY_ID, z: '3', x: '1', y: '1', [name]: text };
    const result = QUERY_ROUTES.getQueryTile.parsePath(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.name).toBe(name);
  });

  it('read the token header case-insensitively, require it on pages, and leave it to the token parameter on GET routes', () => {
    expect(QUERY_ROUTES.getQueryPage.parseHeaders(new Headers({ 'x-service-query-token': 't' }))).toEqual({ ok: true, value: { [QUERY_TOKEN_HEADER]: 't' } });
    expect(QUERY_ROUTES.getQueryPage.parseHeaders(new Headers())).toMatchObject({ ok: false, name: QUERY_TOKEN_HEADER });
    expect(QUERY_ROUTES.getQueryBounds.parseHeaders(new Headers({ 'X-Service-Query-Token': 't' }))).toEqual({ ok: true, value: { [QUERY_TOKEN_HEADER]: 't' } });
    expect(QUERY_ROUTES.getQueryBounds.parseHeaders(new Headers())).toEqual({ ok: true, value: {} });
    expect(QUERY_ROUTES.getQueryTile.parseHeaders(new Headers())).toEqual({ ok: true, value: {} });
  });

  it('let the tile route take its token as a query parameter and ignore other parameters, but not a repeated token', () => {
    expect(QUERY_ROUTES.getQueryTile.parseQuery(new URLSearchParams('token=t&v=2'))).toEqual({ ok: true, value: { token: 't' } });
    expect(QUERY_ROUTES.getQueryTile.parseQuery(new URLSearchParams('token=a&token=b')).ok).toBe(false);
  });
});

describe('unknown query parameters', () => {
  const examples: Record<keyof typeof CATALOG_ROUTES, string> = {
    root: '/api',
    openapi: '/api/openapi',
    health: '/api/health',
    collections: '/api/collections',
    collection: '/api/collections/ne',
    tags: '/api/collections/ne/datasets/tags',
    dataset: '/api/collections/ne/datasets/land',
    file: '/api/collections/ne/datasets/land/files/land-110m',
    schema: '/api/collections/ne/datasets/land/files/land-110m/schema',
    datasets: '/api/datasets',
    'dataset-by-id': '/api/datasets/12',
    stats: '/api/datasets/stats',
  };

  it.each(Object.entries(examples))('on %s (%s) are ignored when it takes none, else a 400 naming what it accepts', (name, path) => {
    const route = CATALOG_ROUTES[name as keyof typeof CATALOG_ROUTES] as Route;
    const plain = resolveApiUrl(path, new URLSearchParams());
    const busted = resolveApiUrl(path, new URLSearchParams('_=1&_=2&probe'));
    if (!plain.ok) throw new Error(plain.detail);
    expect(plain.route.route).toBe(name);
    if (takesQuery(route)) {
      expect(busted).toMatchObject({ ok: false, status: 400 });
      if (!busted.ok) expect(busted.detail).toContain(Object.keys(route.query!).join(', '));
    } else {
      expect(busted).toEqual(plain);
      expect(fileKeyForRoute(plain.route)).toBe(`${path.slice(1)}/index.json`);
    }
  });

  it('are 400 when an accepted parameter is repeated, even with the same value', () => {
    expect(resolveApiUrl('/api/collections/ne', new URLSearchParams('offset=5&offset=5'))).toMatchObject({ ok: false, status: 400 });
  });

  it('are not looked up on Object.prototype', () => {
    expect(resolveApiUrl('/api/collections/ne', new URLSearchParams('constructor=1'))).toMatchObject({ ok: false, status: 400 });
    expect(resolveApiUrl('/api/collections/ne', new URLSearchParams('__proto__=1'))).toMatchObject({ ok: false, status: 400 });
  });
});

describe('paths', () => {
  it.each([
    ['/api/datasets/01', 400],
    ['/api/datasets/0', 400],
    ['/api/datasets/1e3', 400],
    ['/api/datasets/%2B1', 400],
    ['/api/collections/Natural-Earth', 404],
    ['/api/collections/ne/datasets', 404],
    ['/api/queries', 404],
    ['/%61pi/health', 404],
  ])('%s answers %i', (path, status) => {
    expect(resolveApiUrl(path, new URLSearchParams())).toMatchObject({ ok: false, status });
  });

  it.each([
    ['/api/', 'api/index.json'],
    ['/api/datasets/stats', 'api/datasets/stats/index.json'],
    ['/api/datasets/12', 'api/datasets/12/index.json'],
    ['/api/collections/ne/datasets/tags?tag_key=categories', 'api/collections/ne/datasets/tags/_query/tag_key=categories.json'],
    ['/api/collections?include=files,datasets', 'api/collections/_query/include=datasets%2Cfiles.json'],
    ['/api/collections/ne/datasets/land?include_urls=true', 'api/collections/ne/datasets/land/_query/include_urls=true.json'],
    ['/api/collections/ne?limit=50&offset=0', 'api/collections/ne/index.json'],
    ['/api/collections/ne?tag_filters=Categories:Cities', 'api/collections/ne/_query/tag_filters=categories%3Acities.json'],
    ['/api/collections/x/datasets/y/files/z/schema?column_limit=25', 'api/collections/x/datasets/y/files/z/schema/_query/column_limit=25&column_offset=0.json'],
  ])('%s is stored as %s', (url, key) => {
    const parsed = new URL(url, 'http://localhost');
    const resolution = resolveApiUrl(parsed.pathname, parsed.searchParams);
    if (!resolution.ok) throw new Error(resolution.detail);
    expect(fileKeyForRoute(resolution.route)).toBe(key);
  });
});

/** A piece of a TypeScript source: code, or the text of one string literal (template text included). */
interface Piece {
  kind: 'code' | 'string';
  text: string;
  line: number;
}

/** Splits source into code and string literals, dropping comments. Regex literals are read as code. */
function splitSource(source: string): Piece[] {
  const pieces: Piece[] = [];
  const templates: number[] = [];
  let kind: 'code' | 'string' = 'code';
  let text = '';
  let line = 1;
  let start = 1;
  let quote = '';
  const flush = (next: 'code' | 'string') => {
    if (text) pieces.push({ kind, text, line: start });
    kind = next;
    text = '';
    start = line;
  };
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === '\n') line++;
    if (kind === 'code') {
      if (char === '/' && source[i + 1] === '/') {
        const end = source.indexOf('\n', i);
        i = (end === -1 ? source.length : end) - 1;
      } else if (char === '/' && source[i + 1] === '*') {
        const end = source.indexOf('*/', i + 2) === -1 ? source.length : source.indexOf('*/', i + 2);
        line += source.slice(i, end).split('\n').length - 1;
        i = end + 1;
      } else if (char === '/' && /[(,=:[!&|?{};]$|^$/.test(text.trimEnd().slice(-1))) {
        // A regular expression literal: skip it, classes and escapes included, so its quotes start no string.
        let inClass = false;
        for (i++; i < source.length && (inClass || source[i] !== '/'); i++) {
          if (source[i] === '\\') i++;
          else if (source[i] === '[') inClass = true;
          else if (source[i] === ']') inClass = false;
        }
        text += ' ';
      } else if (char === "'" || char === '"' || char === '`') {
        flush('string');
        quote = char;
      } else if (char === '}' && templates.at(-1) === 0) {
        templates.pop();
        flush('string');
        quote = '`';
      } else {
        if (char === '{' && templates.length) templates[templates.length - 1]!++;
        if (char === '}' && templates.length) templates[templates.length - 1]!--;
        text += char;
      }
    } else if (char === '\\') {
      text += source.slice(i, i + 2);
      i++;
    } else if (char === quote) {
      flush('code');
    } else if (quote === '`' && char === '$' && source[i + 1] === '{') {
      flush('code');
      templates.push(0);
      i++;
    } else {
      text += char;
    }
  }
  flush('code');
  return pieces;
}

/** HTTP's own request headers (RFC 9110: conditional and range requests), read wherever HTTP is answered. */
const HTTP_HEADERS = new Set(['if-none-match', 'range', 'if-range']);
/** The names of query parameters and headers the tables declare, HTTP's own headers aside. */
const PARAMETER_NAMES = [...new Set(routes.flatMap((route) => [...Object.keys(route.query ?? {}), ...Object.keys(route.headers ?? {})]))]
  .filter((name) => !HTTP_HEADERS.has(name.toLowerCase()));

/** Limits the tables and constants state, with the words (case-sensitive) a duplicate of each would stand next to. */
function collectLimits(): Map<number, Set<string>> {
  const limits = new Map<number, Set<string>>();
  const add = (value: unknown, ...words: string[]) => {
    if (typeof value !== 'number' || value < 20 || value >= Number.MAX_SAFE_INTEGER) return;
    for (const word of words.filter((candidate) => candidate.length > 2)) (limits.get(value) ?? limits.set(value, new Set()).get(value)!).add(word);
  };
  for (const route of routes) {
    for (const [name, schema] of Object.entries({ ...route.pathParams, ...route.query })) {
      const json = parameterJsonSchema(schema);
      for (const variant of [json, ...((json.anyOf as Record<string, unknown>[] | undefined) ?? [])]) {
        add(variant.default, name);
        add(variant.minimum, name);
        add(variant.maximum, name);
      }
    }
    if (route.body) {
      const body = parameterJsonSchema(route.body) as { $ref?: string; $defs?: Record<string, { properties: Record<string, Record<string, unknown>> }> };
      const properties = body.$defs?.[body.$ref?.split('/').at(-1) ?? '']?.properties ?? {};
      for (const [name, field] of Object.entries(properties)) {
        for (const key of ['default', 'maximum', 'maxLength', 'maxItems']) add(field[key], name);
      }
    }
  }
  add(constants.DEFAULT_LIST_LIMIT, 'limit', 'at a time', 'page');
  add(constants.DEFAULT_COLUMN_LIMIT, 'column_limit', 'column_offset', 'columns');
  add(constants.MAX_COLUMN_LIMIT, 'column_limit', 'column_offset', 'columns');
  add(constants.MAX_AGGREGATE_ROWS, 'datasets', 'rows', 'aggregate');
  return limits;
}

/** Where a parameter name is written as a string literal, or a limit as a number beside what it limits. */
function findDuplicates(source: string, file: string): string[] {
  const limits = collectLimits();
  const found: string[] = [];
  const pieces = splitSource(source);
  for (const piece of pieces) {
    if (piece.kind === 'string' && PARAMETER_NAMES.some((name) => name.toLowerCase() === piece.text.toLowerCase())) {
      found.push(`${file}:${piece.line}: parameter name '${piece.text}'`);
    }
  }
  const lines = new Map<number, string>();
  for (const piece of pieces) for (const [offset, text] of piece.text.split('\n').entries()) lines.set(piece.line + offset, `${lines.get(piece.line + offset) ?? ''} ${text}`);
  for (const [line, text] of lines) {
    for (const match of text.matchAll(/(?<![\w.$])\d+(?![\w.])/g)) {
      const words = limits.get(Number(match[0]));
      const word = words && [...words].find((candidate) => new RegExp(`(?<![\\w])${candidate}(?![\\w])`).test(text));
      if (word) found.push(`${file}:${line}: limit ${match[0]} beside "${word}"`);
    }
  }
  return found;
}

/** Files the scan skips for names (the table is where names live) or for limits (where limits live), and why. */
const NAME_HOMES = ['core/api/'];
const LIMIT_HOMES = ['core/constants.ts', 'schemas/'];
/** Literals that look like duplicates but are not, each with its reason. */
const ALLOWED: { file: string; finding: RegExp; reason: string }[] = [
  { file: 'schemas/query.ts', finding: /parameter name '(X-Service-Query-Token|token)'/, reason: 'map_configuration states the names as z.literal values; schemas cannot import core/api, and a test checks they equal the table' },
  { file: 'query/page.ts', finding: /parameter name '(X-Service-Query-Token|token)'/, reason: 'the map_configuration values, type-checked against the z.literal of schemas/query.ts' },
  { file: 'generator/emit/openapi.ts', finding: /parameter name 'query'/, reason: 'the OpenAPI parameter location `in: query`, not the search alias' },
  { file: 'query/sql-walk.ts', finding: /parameter name 'query'/, reason: 'a kind of SQL syntax node, not the search alias' },
  { file: 'generator/model/build-model.ts', finding: /parameter name 'version'/, reason: 'the `version` field of a source record, in the path of a build error' },
  { file: 'query/steps.ts', finding: /parameter name '(query|token)'/, reason: 'the names of Server-Timing steps, given once there' },
  ...['generator/build.ts', 'generator/model/removals.ts', 'generator/emit/discovery/atom-feed.ts'].map((file) => ({ file, finding: /parameter name 'version'/, reason: 'the kind of a removal the feeds tell (a version of a file), not a parameter' })),
];

function sourceFiles(): string[] {
  return ['core', 'generator', 'server', 'query', 'schemas'].flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => relative(ROOT, join(entry.parentPath, entry.name))));
}

describe('a parameter or a limit', () => {
  it('is written once: names only in the route table, limits only in core/constants.ts and schemas/', () => {
    const findings = sourceFiles().flatMap((file) =>
      findDuplicates(readFileSync(join(ROOT, file), 'utf8'), file).filter((finding) => {
        if (finding.includes('parameter name') && NAME_HOMES.some((home) => file.startsWith(home))) return false;
        if (finding.includes(' limit ') && LIMIT_HOMES.some((home) => file.startsWith(home))) return false;
        return !ALLOWED.some((allowed) => allowed.file === file && allowed.finding.test(finding));
      }));
    expect(findings).toEqual([]);
  });

  it.each([
    [`const limit = readInteger('column_limit', nullAsAbsent(known.get('column_limit')), 1, 50);`, 3],
    [`    params.column_limit = limit ?? 25;`, 1],
    [`inQuery('column_limit', 'Columns per page; turns paging on.', { type: 'integer', minimum: 1, maximum: MAX_COLUMN_LIMIT, default: 25 }),`, 2],
    [`collection_datasets: 'GET /api/collections/{slug} lists datasets 50 at a time. Parameters: search (alias query), tag_filters, limit.',`, 1],
    ['schema: \'version selects another; column_offset/column_limit (1–50, default 25) page the columns.\',', 2],
    ['`alias is the table name in the SQL. Up to 8 sources; SQL up to 8 KiB; \\`limit\\` 1–1000 (default 100).`', 2],
    [`'/api/datasets': get('listDatasets', catalog, 'Datasets across collections', 'The first 200 datasets by id.', [],`, 1],
    [`const token = event.req.headers.get('x-service-query-token') ?? event.url.searchParams.get('token');`, 2],
  ])('would be caught as it was written before the table: %s', (line, count) => {
    expect(findDuplicates(line, 'fixture.ts')).toHaveLength(count);
  });

  it('is not confused by comments, URLs or numbers that limit nothing', () => {
    expect(findDuplicates(`// column_limit defaults to 25\nconst url = 'https://x/'; // 'limit'\nreturn new Response(null, { status: 200 });`, 'fixture.ts')).toEqual([]);
  });
});
