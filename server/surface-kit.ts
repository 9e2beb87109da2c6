import { HTTPError, type H3, type H3Event } from 'h3';
import type { ParseFailure, PathValues, Route } from '../core/api/route-table.ts';

/** A route of any table, whatever its parameters (a table is a record of routes with different ones). */
type AnyRoute = Route<any, any, any>;
/** Path parameter values of a route, parsed by its schemas. */
type PathOf<R> = R extends Route<infer P, infer _Q, infer _H> ? PathValues<P> : never;

/** Answers a request of one route, given its parsed path parameters; throws what its surface's mapper answers. */
export type RouteHandler<R extends Route = Route> = (event: H3Event, path: PathOf<R>) => Response | Promise<Response>;

/**
 * Turns what a surface's route threw, or what h3 refused on a path of the surface before routing, into the
 * surface's error answer: problem+json, `{code, message}`, an OGC exception document.
 */
export type ErrorMapper = (error: unknown, event: H3Event) => Response | Promise<Response>;

/** A surface to mount: its route table, the handler of each route, and the answers of what no route takes. */
export interface SurfaceTable<T extends Record<string, AnyRoute>> {
  /** The routes; the path they all start with is the surface's base, any other path under which is its 404. */
  routes: T;
  /** A handler per route id, or one for every route (the catalog: its prebuilt file, else its renderer). */
  handlers: { [K in keyof T]: RouteHandler<T[K]> } | RouteHandler;
  /** A path parameter that does not parse; without it, a 404 answered by the table's error mapper. */
  invalidPath?: (failure: ParseFailure, event: H3Event) => Response | Promise<Response>;
  /** Another method on a route's path; `methods` are those it accepts, for the message and the Allow header. */
  methodNotAllowed: (methods: readonly string[], event: H3Event) => Response | Promise<Response>;
  /**
   * A path under the surface's base that no route matches. Without it the table claims only its routes' paths: a
   * few routes inside another surface's space (readiness and download-zip under the catalog's /api) leave every
   * other path, and what h3 refuses before routing, to that surface.
   */
  notFound?: (event: H3Event) => Response | Promise<Response>;
}

/** The error mappers of the tables mounted on each app, longest base first, for errors raised outside any handler. */
const mounts = new WeakMap<object, { base: string; mapError: ErrorMapper }[]>();

/**
 * Mounts a surface: GET and HEAD for each GET route, POST for each POST route, a 405 for any other method on a
 * route's path, and the table's 404, when it has one, for any other path under its base (the leading segments
 * every route's path shares: `/stac/api`). Whatever a handler throws is answered by `mapError`, which also answers what h3 refuses on
 * a path under the base before routing (see {@link findErrorMapper}).
 * @example
 * mountRouteTable(app, { routes: TOY_ROUTES, handlers, invalidPath, methodNotAllowed, notFound }, mapToyError);
 */
export function mountRouteTable<T extends Record<string, AnyRoute>>(app: H3, table: SurfaceTable<T>, mapError: ErrorMapper): void {
  const guard = (event: H3Event, answer: () => Response | Promise<Response>) => answerOrMap(event, answer, mapError);
  const methodsByPath = new Map<string, string[]>();
  for (const [id, route] of Object.entries(table.routes) as [keyof T & string, Route][]) {
    const handle = (typeof table.handlers === 'function' ? table.handlers : table.handlers[id]) as RouteHandler;
    const methods = route.method === 'GET' ? (['GET', 'HEAD'] as const) : [route.method];
    methodsByPath.set(route.h3Path, [...(methodsByPath.get(route.h3Path) ?? []), ...methods]);
    for (const method of methods) {
      app.on(method, route.h3Path, (event) => guard(event, () => {
        const path = route.parsePath(event.context.params ?? {});
        if (path.ok) return handle(event, path.value);
        if (table.invalidPath) return table.invalidPath(path, event);
        throw new HTTPError({ status: 404, message: path.detail });
      }));
    }
  }
  for (const [path, methods] of methodsByPath) app.all(path, (event) => guard(event, () => table.methodNotAllowed(methods, event)));
  const notFound = table.notFound;
  if (!notFound) return;
  const base = baseOf(Object.values(table.routes));
  app.all(`${base}/**`, (event) => guard(event, () => notFound(event)));
  mounts.set(app, [...(mounts.get(app) ?? []), { base, mapError }].sort((a, b) => b.base.length - a.base.length));
}

/** The path every route of a table is under: the segments all their paths start with, up to the first placeholder. */
function baseOf(routes: readonly Route[]): string {
  const [first, ...others] = routes.map((route) => route.path.split('/'));
  let length = 1;
  while (first && length < first.length && !first[length]!.includes('{') && others.every((segments) => segments[length] === first[length])) length += 1;
  return first ? first.slice(0, length).join('/') : '';
}

/**
 * The error mapper of the mounted table whose base holds the path, for the app's error handler: what h3 refuses
 * before routing (a URL that is not valid percent-encoding) is answered in the shape of the surface it was meant for.
 */
export function findErrorMapper(app: object | undefined, pathname: string): ErrorMapper | undefined {
  const found = app ? mounts.get(app)?.find(({ base }) => pathname === base || pathname.startsWith(`${base}/`)) : undefined;
  return found?.mapError;
}

async function answerOrMap(event: H3Event, answer: () => Response | Promise<Response>, mapError: ErrorMapper): Promise<Response> {
  try {
    return await answer();
  } catch (error) {
    return mapError(error, event);
  }
}
