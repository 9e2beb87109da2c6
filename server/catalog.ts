import { statSync } from 'node:fs';
import { join } from 'node:path';
import { HTTPError } from 'h3';
import { FastResponse } from 'srvx';
import { catalogIndexSlices } from '../core/catalog-index.ts';
import { warmStacSearchSlices } from '../core/api/stac/search.ts';
import { runAtOnce, runInSlices, type Sliced } from '../core/slices.ts';
import { fileKeyForRoute, resolveApiUrl, type CatalogRoute } from '../core/api/catalog/resolve.ts';
import { CATALOG_ROUTES } from '../core/api/catalog/routes.ts';
import { answerCatalogRoute, createRenderContext, type CatalogAnswer } from '../core/api/catalog/answer.ts';
import type { RenderContext } from '../core/api/catalog/resources.ts';
import { fileKeysForPath, serializeJson } from '../core/static-files.ts';
import { pageKey, SITE_PATHS } from '../core/site/paths.ts';
import { loadManifestSlices, type LoadedManifest } from '../runtime/manifest.ts';
import { readModelSlices, type LoadedModel } from '../runtime/model-file.ts';
import { asBody, respondComputed, respondStatic } from './responses.ts';
import { parseAcceptEncoding, StaticStore } from './static-store.ts';

/** One loaded build: its files and the index that computes answers that were not prebuilt. */
export interface CatalogSnapshot {
  store: StaticStore;
  context: RenderContext;
  /** mtime of manifest.json when loaded, to notice a new build. */
  loadedAt: number;
  /** Request targets (path and query) already resolved to a prebuilt file. */
  memo: UrlMemo;
  /** The manifest's and the model's parts by hash, which the next load takes over where its roots name them again. */
  manifestParts: LoadedManifest['parts'];
  modelParts: LoadedModel['parts'];
}

/** Methods of the catalog routes, for the Allow header of a 405. */
export const CATALOG_ALLOW = [...new Set([...Object.values(CATALOG_ROUTES).map((route) => route.method), 'HEAD', 'OPTIONS'])].join(', ');

/** Byte budget of a snapshot's URL memo. */
const URL_MEMO_BYTES = 8 * 1024 * 1024;
/** Targets longer than this are not remembered: canonical URLs are short, and a long one would crowd out many. */
const URL_MEMO_MAX_TARGET = 2048;
/** Rough cost of a Map entry beside its two strings. */
const URL_MEMO_ENTRY_BYTES = 64;

/**
 * Request targets already resolved to a prebuilt file, so a repeated URL skips resolution. Bounded by bytes, not
 * entries (each entry costs its key and value as UTF-16 plus a fixed overhead); past the budget the oldest entries
 * leave first. Only targets that resolved to a file are remembered, never errors.
 */
export class UrlMemo {
  readonly budgetBytes: number;
  readonly #entries = new Map<string, string>();
  #bytes = 0;

  constructor(budgetBytes = URL_MEMO_BYTES) {
    this.budgetBytes = budgetBytes;
  }

  /** The file key a target resolved to before. */
  get(target: string): string | undefined {
    return this.#entries.get(target);
  }

  /** Remembers that a target resolved to a file key. */
  set(target: string, key: string): void {
    if (target.length > URL_MEMO_MAX_TARGET || this.#entries.has(target)) return;
    this.#entries.set(target, key);
    this.#bytes += cost(target, key);
    for (const [oldest, value] of this.#entries) {
      if (this.#bytes <= this.budgetBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= cost(oldest, value);
    }
  }

  /** Bytes the remembered entries account for. */
  get bytes(): number {
    return this.#bytes;
  }

  /** How many targets are remembered. */
  get size(): number {
    return this.#entries.size;
  }
}

function cost(target: string, key: string): number {
  return 2 * (target.length + key.length) + URL_MEMO_ENTRY_BYTES;
}

/** Loads `dist/`: the manifest, the model for computed answers, and the body cache, warmed from disk. */
export function loadSnapshot(distDir: string, options: SnapshotOptions): CatalogSnapshot {
  return runAtOnce(snapshotSlices(distDir, options));
}

/**
 * Loads `dist/` again while the server keeps answering from `previous`: the same load in slices of a few
 * milliseconds, with the STAC search indexes built before the snapshot is returned, so that, garbage collection
 * aside, no request waits for more than a slice. At 100,000 datasets a reload held the server for seconds. What
 * the new build did not change is taken over from `previous`: the bodies in the cache, the model parts, and what
 * the catalog index derived from them.
 */
export function reloadSnapshot(distDir: string, options: SnapshotOptions, previous: CatalogSnapshot, sliceMs?: number): Promise<CatalogSnapshot> {
  return runInSlices((function* () {
    const snapshot = yield* snapshotSlices(distDir, options, previous);
    yield* warmStacSearchSlices(snapshot.context.index);
    snapshot.context.index.derived.forgetPrevious();
    return snapshot;
  })(), sliceMs);
}

/** Options of a snapshot's body cache. */
export interface SnapshotOptions {
  budgetBytes: number;
  cacheMaxAge: number;
}

function* snapshotSlices(distDir: string, options: SnapshotOptions, previous?: CatalogSnapshot): Sliced<CatalogSnapshot> {
  const manifestPath = join(distDir, 'manifest.json');
  const loadedAt = statSync(manifestPath).mtimeMs;
  const same = previous?.store.distDir === distDir;
  const loaded = yield* loadManifestSlices(distDir, same ? previous.manifestParts : undefined);
  if (!loaded) throw new Error(`${distDir} holds no readable manifest.json; run npm run build`);
  const stored = yield* readModelSlices(distDir, same ? previous.modelParts : undefined, { intern: true });
  const store = new StaticStore(distDir, loaded.manifest, options);
  if (same) yield* store.adopt(previous.store);
  else store.warm();
  const index = yield* catalogIndexSlices(stored.file.model, stored.file.settings, same ? previous.context.index : undefined);
  return { store, context: createRenderContext(index), loadedAt, memo: new UrlMemo(), manifestParts: loaded.parts, modelParts: stored.parts };
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
 * computed answer for /api routes (resolved through the catalog route table), otherwise 404: the web app's
 * 404 page for a GET outside /api, a Problem for everything else. Bad parameters throw HTTPErrors that the app
 * renders as Problems.
 */
export function answerCatalogRequest(snapshot: CatalogSnapshot, request: Request, url: URL, cacheMaxAge: number): Response | Promise<Response> {
  const { pathname } = url;
  const accepted = parseAcceptEncoding(request.headers.get('accept-encoding'));
  const target = pathname + url.search;
  const known = snapshot.memo.get(target);
  const remembered = known === undefined ? undefined : snapshot.store.get(known, accepted);
  if (remembered) return respondStatic(request, remembered);
  if (pathname === '/api' || pathname.startsWith('/api/')) {
    const resolution = resolveApiUrl(pathname, url.searchParams);
    if (!resolution.ok) throw new HTTPError({ status: resolution.status, message: resolution.detail });
    const key = fileKeyForRoute(resolution.route);
    const body = key === undefined ? undefined : snapshot.store.get(key, accepted);
    if (body) {
      snapshot.memo.set(target, key!);
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
  const key = fileKeysForPath(decoded).find((candidate) => snapshot.store.has(candidate));
  const body = key === undefined ? undefined : snapshot.store.get(key, accepted);
  if (!body) {
    const page = snapshot.store.get(pageKey(SITE_PATHS.notFound), accepted);
    if (page && request.method === 'GET') return new FastResponse(asBody(page.bytes), { status: 404, headers: page.headers.filter(([name]) => name !== 'etag') });
    throw new HTTPError({ status: 404, message: `There is no file at ${pathname.slice(0, 200)}.` });
  }
  // Files outside /api ignore the query, so only the bare path is remembered: cache busters must not fill the memo.
  if (url.search === '') snapshot.memo.set(target, key!);
  return respondStatic(request, body);
}
