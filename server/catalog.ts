import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HTTPError } from 'h3';
import { INTERNAL_DIR } from '../core/constants.ts';
import { createCatalogIndex } from '../core/catalog-index.ts';
import { answerCatalogRoute, createRenderContext, type CatalogAnswer } from '../core/render/answer.ts';
import type { RenderContext } from '../core/render/resources.ts';
import { fileKeyForRoute, resolveApiUrl, type CatalogRoute } from '../core/routes.ts';
import { fileKeyForPath, serializeJson } from '../core/static-files.ts';
import { MODEL_FILE, readManifestSync, type ModelFile } from '../runtime/manifest.ts';
import { respondComputed, respondStatic } from './responses.ts';
import { parseAcceptEncoding, StaticStore } from './static-store.ts';

/** One loaded build: its files and the index that computes answers that were not prebuilt. */
export interface CatalogSnapshot {
  store: StaticStore;
  context: RenderContext;
  /** mtime of manifest.json when loaded, to notice a new build. */
  loadedAt: number;
  /** Request path and query → file key, for URLs already resolved to a prebuilt file. */
  keys: Map<string, string>;
}

/** How many resolved URLs a snapshot remembers; past this the memo starts again. */
const KEY_MEMO_SIZE = 100_000;

/** Loads `dist/`: the manifest, the model for computed answers, and warms the body cache. */
export function loadSnapshot(distDir: string, options: { budgetBytes: number; cacheMaxAge: number }): CatalogSnapshot {
  const manifestPath = join(distDir, 'manifest.json');
  const loadedAt = statSync(manifestPath).mtimeMs;
  const manifest = readManifestSync(distDir);
  if (!manifest) throw new Error(`${distDir} holds no readable manifest.json; run npm run build`);
  const stored = JSON.parse(readFileSync(join(distDir, INTERNAL_DIR, MODEL_FILE), 'utf8')) as ModelFile;
  const store = new StaticStore(distDir, manifest, options);
  store.warm();
  return { store, context: createRenderContext(createCatalogIndex(stored.model, stored.settings)), loadedAt, keys: new Map() };
}

/** Computes the answer of a route that has no prebuilt file, as the generator would have written it. */
export function computeAnswer(snapshot: CatalogSnapshot, pathname: string, query: URLSearchParams): CatalogAnswer {
  const resolution = resolveApiUrl(pathname, query);
  if (!resolution.ok) throw new HTTPError({ status: resolution.status, message: resolution.detail });
  return computeRoute(snapshot, resolution.route);
}

function computeRoute(snapshot: CatalogSnapshot, route: CatalogRoute): CatalogAnswer {
  if (route.route === 'openapi') throw new HTTPError({ status: 404, message: 'The OpenAPI document is missing from this build.' });
  return answerCatalogRoute(snapshot.context, route);
}

/**
 * Answers a GET or HEAD outside /api/queries: the prebuilt file when the canonical URL has one, otherwise the
 * computed answer for /api routes, otherwise 404. Bad parameters and unknown paths throw HTTPErrors that the
 * app renders as Problems.
 */
export function answerCatalogRequest(snapshot: CatalogSnapshot, request: Request, url: URL, cacheMaxAge: number): Response {
  const { pathname } = url;
  const accepted = parseAcceptEncoding(request.headers.get('accept-encoding'));
  const memoKey = pathname + url.search;
  const known = snapshot.keys.get(memoKey);
  if (known !== undefined) return respondStatic(request, snapshot.store.get(known, accepted)!);
  const remember = (key: string) => {
    if (snapshot.keys.size >= KEY_MEMO_SIZE) snapshot.keys.clear();
    snapshot.keys.set(memoKey, key);
  };
  if (pathname === '/api' || pathname.startsWith('/api/')) {
    const resolution = resolveApiUrl(pathname, url.searchParams);
    if (!resolution.ok) throw new HTTPError({ status: resolution.status, message: resolution.detail });
    const key = fileKeyForRoute(resolution.route);
    const body = key === undefined ? undefined : snapshot.store.get(key, accepted);
    if (body) {
      remember(key!);
      return respondStatic(request, body);
    }
    const answer = computeRoute(snapshot, resolution.route);
    if (answer.problem) throw new HTTPError({ status: answer.status, message: (answer.body as { detail?: string }).detail ?? 'Not found' });
    return respondComputed(request, serializeJson(answer.body), { type: 'application/json', cacheMaxAge });
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    throw new HTTPError({ status: 400, message: 'The path is not valid percent-encoding.' });
  }
  const key = fileKeyForPath(decoded);
  const body = key === undefined ? undefined : snapshot.store.get(key, accepted);
  if (!body) throw new HTTPError({ status: 404, message: `There is no file at ${pathname.slice(0, 200)}.` });
  remember(key!);
  return respondStatic(request, body);
}
