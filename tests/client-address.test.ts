import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../runtime/config.ts';
import { normalizeAddress, resolveClientAddress } from '../server/client-address.ts';
import { listen } from '../server/listen.ts';
import { postQueryFrom, queryServer, sourceRef, untilShed } from './helpers/queries.ts';

const TRUSTED = new Set(['127.0.0.1', '10.0.0.2']);

describe('the client a request counts as', () => {
  it.each([
    ['a direct client is its socket address, whatever it writes', '203.0.113.9', '1.2.3.4', '203.0.113.9'],
    ['a trusted proxy stands for the address it appended', '127.0.0.1', '203.0.113.9', '203.0.113.9'],
    ['addresses a client wrote left of it are not believed', '127.0.0.1', '6.6.6.6, 203.0.113.9', '203.0.113.9'],
    ['a chain of trusted proxies is walked to the first untrusted hop', '127.0.0.1', '6.6.6.6, 203.0.113.9, 10.0.0.2', '203.0.113.9'],
    ['a trusted proxy that sends no X-Forwarded-For is the client', '127.0.0.1', null, '127.0.0.1'],
    ['a hop that is no address ends the walk at the last one that was', '127.0.0.1', '203.0.113.9, not-an-ip', '127.0.0.1'],
    ['an IPv4-mapped proxy address is trusted as its IPv4 form', '::ffff:127.0.0.1', '2001:db8::7', '2001:db8::7'],
    ['a chain of trusted proxies only is counted as its farthest one', '127.0.0.1', '10.0.0.2', '10.0.0.2'],
  ])('%s', (_name, remote, forwardedFor, expected) => {
    expect(resolveClientAddress(remote, forwardedFor, TRUSTED)).toBe(expected);
  });

  it('trusts no one unless told', () => {
    expect(resolveClientAddress('127.0.0.1', '203.0.113.9', new Set())).toBe('127.0.0.1');
  });

  it('matches addresses in the forms proxies write them', () => {
    expect(['::FFFF:10.0.0.2', 'FE80::1%eth0', '10.0.0.2'].map(normalizeAddress)).toEqual(['10.0.0.2', 'fe80::1', '10.0.0.2']);
  });

  it('refuses a trusted proxy setting that is not a list of IP addresses, naming the variable', () => {
    expect(loadConfig({ GEOSHELF_TRUSTED_PROXIES: '127.0.0.1, ::1' }).trustedProxies).toEqual(['127.0.0.1', '::1']);
    expect(() => loadConfig({ GEOSHELF_TRUSTED_PROXIES: '127.0.0.1,nginx' })).toThrow(/GEOSHELF_TRUSTED_PROXIES/);
  });
});

describe('clients behind a trusted proxy, in the query pool', () => {
  // One worker, and a client may have two tasks waiting: a burst of one client overflows its own share at once.
  const small = queryServer({ queryWorkers: 1, querySpareWorkers: 0, queryClientQueue: 2, queryTimeoutMs: 30_000, trustedProxies: ['127.0.0.5'] });
  let origin = '';
  let stop: () => Promise<void>;
  beforeAll(async () => {
    const server = await listen(small, { port: 0, hostname: '127.0.0.1' });
    origin = server.url!.replace(/\/$/, '');
    stop = () => server.close(true);
  });
  afterAll(async () => {
    await stop();
    await small.close();
  });

  const postVia = async (localAddress: string, forwardedFor: string, sql: string) => {
    const body = { sources: [sourceRef(small, 'countries', 'natural-earth', 'countries', 'countries-110m')], sql, limit: 1 };
    const answer = await postQueryFrom(origin, localAddress, body, { 'x-forwarded-for': forwardedFor });
    return { status: answer.status, code: answer.body.code };
  };

  const slow = (index: number) => `SELECT sum(length(a.name || b.name || c.name)) AS n FROM countries a, countries b, countries c WHERE a.name <> '${index}'`;

  it('serves a client behind the proxy while another one behind it floods the pool', async () => {
    const burst = Array.from({ length: 10 }, (_, index) => postVia('127.0.0.5', '198.51.100.1', slow(index)));
    await untilShed(burst, (answer) => answer.status === 503);
    const other = await postVia('127.0.0.5', '198.51.100.2', 'SELECT count(*) AS n FROM countries');
    expect(other.status).toBe(200);
    const answers = await Promise.all(burst);
    expect(answers.filter((answer) => answer.status === 503).every((answer) => answer.code === 'query_service_busy')).toBe(true);
    expect(answers.some((answer) => answer.status === 503)).toBe(true);
  });

  it('counts a client that is not a trusted proxy as itself, whatever X-Forwarded-For it sends', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, index) => postVia('127.0.0.6', `198.51.100.${10 + index}`, slow(index))));
    expect(answers.filter((answer) => answer.status === 503).length).toBeGreaterThan(0);
  });
});
