import { H3 } from 'h3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../core/api/route-table.ts';
import { findErrorMapper, mountRouteTable, type ErrorMapper } from '../server/surface-kit.ts';

/** The toy surface's error, and its wire shape `{error}`: the "add a surface" recipe of DESIGN.md, in under 40 lines. */
class ToyFailure extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}
const mapToyError: ErrorMapper = (error) => {
  const failure = error instanceof ToyFailure ? error : new ToyFailure((error as { status?: number }).status === 400 ? 400 : 500, 'broken');
  return Response.json({ error: failure.message }, { status: failure.status, headers: failure.headers });
};
const name = z.string().regex(/^[a-z]+$/);
const TOY_ROUTES = {
  getGreeting: defineRoute({ id: 'getGreeting', method: 'GET', path: '/toy/greetings/{name}', tag: 'toy', summary: 'Greet', description: 'Greets a name.', pathParams: { name }, responses: { 200: { description: 'A greeting.' } } }),
  createGreeting: defineRoute({ id: 'createGreeting', method: 'POST', path: '/toy/greetings', tag: 'toy', summary: 'Add', description: 'Adds a greeting.', responses: { 201: { description: 'Added.' } } }),
};
function createToyApp(): H3 {
  const app = new H3({ onError: (error, event) => findErrorMapper(event.app, event.url.pathname)?.(error, event) });
  mountRouteTable(app, {
    routes: TOY_ROUTES,
    handlers: {
      getGreeting: (_event, path) => {
        if (path.name === 'nobody') throw new ToyFailure(409, 'nobody wants a greeting');
        return new Response(`hello ${path.name}`);
      },
      createGreeting: () => new Response(null, { status: 201 }),
    },
    invalidPath: (failure) => { throw new ToyFailure(404, failure.detail); },
    methodNotAllowed: (methods) => { throw new ToyFailure(405, 'not here', { allow: methods.join(', ') }); },
    notFound: () => { throw new ToyFailure(404, 'nothing here'); },
  }, mapToyError);
  return app;
}

describe('a surface mounted from its route table', () => {
  const app = createToyApp();
  const ask = async (method: string, path: string) => {
    const response = await app.request(path, { method });
    return { status: response.status, allow: response.headers.get('allow'), body: await response.text() };
  };

  it.each([
    ['GET', '/toy/greetings/ada', 200, 'hello ada'],
    ['HEAD', '/toy/greetings/ada', 200, ''],
    ['POST', '/toy/greetings', 201, ''],
  ])('answers %s %s with its handler', async (method, path, status, body) => {
    expect(await ask(method, path)).toMatchObject({ status, body });
  });

  it.each([
    ['DELETE', '/toy/greetings/ada', 'GET, HEAD'],
    ['GET', '/toy/greetings', 'POST'],
  ])('answers %s %s 405, its Allow naming what the path accepts', async (method, path, allow) => {
    expect(await ask(method, path)).toEqual({ status: 405, allow, body: '{"error":"not here"}' });
  });

  it.each([
    ['a path under the base that no route matches', '/toy/greetings/ada/friends', 404, '{"error":"nothing here"}'],
    ['a path parameter that does not parse', '/toy/greetings/Ada', 404, '{"error":"path parameter {name} must match ^[a-z]+$, got \\"Ada\\""}'],
    ['what a handler throws', '/toy/greetings/nobody', 409, '{"error":"nobody wants a greeting"}'],
    ['a URL h3 refuses before routing', '/toy/greetings/%E0%A4%A', 400, '{"error":"broken"}'],
  ])('answers %s in the surface\'s own error shape', async (_what, path, status, body) => {
    expect(await ask('GET', path)).toMatchObject({ status, body });
  });

  it('leaves paths outside its base to the rest of the app', async () => {
    expect((await ask('GET', '/toy/elsewhere')).status).toBe(404);
    expect(findErrorMapper(app, '/toy/elsewhere')).toBeUndefined();
    expect(findErrorMapper(app, '/toy/greetings/elsewhere')).toBe(mapToyError);
  });
});

describe('a table without a 404 of its own, inside another surface\'s space', () => {
  const app = createToyApp();
  const STATUS_ROUTES = {
    getStatus: defineRoute({ id: 'getStatus', method: 'GET', path: '/toy/greetings/status/now', tag: 'toy', summary: 'Status', description: 'Says how it is.', responses: { 200: { description: 'The status.' } } }),
  };
  mountRouteTable(app, {
    routes: STATUS_ROUTES,
    handlers: { getStatus: () => new Response('fine') },
    methodNotAllowed: () => new Response('read-only', { status: 405 }),
  }, () => new Response('status failed', { status: 500 }));

  it('answers its own routes and methods', async () => {
    expect(await (await app.request('/toy/greetings/status/now')).text()).toBe('fine');
    expect(await (await app.request('/toy/greetings/status/now', { method: 'PUT' })).text()).toBe('read-only');
  });

  it('leaves every other path under it, and the errors h3 raises there, to the surface around it', async () => {
    const below = await app.request('/toy/greetings/status/now/later');
    expect([below.status, await below.text()]).toEqual([404, '{"error":"nothing here"}']);
    expect(findErrorMapper(app, '/toy/greetings/status/now/later')).toBe(mapToyError);
    expect(findErrorMapper(app, '/toy/greetings/status/now')).toBe(mapToyError);
  });
});
