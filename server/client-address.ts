import { isIP } from 'node:net';
import { getRequestIP, type H3Event } from 'h3';
import { clientKeyOf } from '../query/admission.ts';

/**
 * Who a request comes from, for the query pool's turns and the MCP rate: the socket's remote address, or, when that
 * is a proxy the operator trusts (GEOSHELF_TRUSTED_PROXIES), the client its X-Forwarded-For names. Behind nginx or a
 * load balancer every request comes from the proxy, so without this all clients would share one turn.
 */

/**
 * The client address of a request: `remote` itself unless it is a trusted proxy; then, walking X-Forwarded-For from
 * its right end (the address each proxy appends is the one it saw), the first address that is not a trusted proxy.
 * Anything left of it is whatever the client wrote, and is never believed. A hop that is not an IP address ends
 * the walk at the last address that was one.
 * @example resolveClientAddress('127.0.0.1', '6.6.6.6, 203.0.113.9', new Set(['127.0.0.1'])) // '203.0.113.9'
 */
export function resolveClientAddress(remote: string | undefined, forwardedFor: string | null, trusted: ReadonlySet<string>): string | undefined {
  if (remote === undefined || trusted.size === 0 || !forwardedFor) return remote;
  let client = normalizeAddress(remote);
  if (!trusted.has(client)) return remote;
  const hops = forwardedFor.split(',');
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = normalizeAddress(hops[index]!.trim());
    if (isIP(hop) === 0) break;
    client = hop;
    if (!trusted.has(hop)) break;
  }
  return client;
}

/** An address as the trusted list is matched against: IPv4-mapped IPv6 as IPv4, lower case, no zone. */
export function normalizeAddress(address: string): string {
  const plain = address.toLowerCase().split('%')[0]!;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  return mapped ? mapped[1]! : plain;
}

/**
 * Records each request's client key (query/admission.ts `clientKeyOf`) on its event, for {@link requestClientOf}.
 * Mount it first.
 */
export function createClientMiddleware(trustedProxies: readonly string[]): (event: H3Event) => void {
  const trusted = new Set(trustedProxies.map(normalizeAddress));
  return (event) => {
    const address = resolveClientAddress(getRequestIP(event), event.req.headers.get('x-forwarded-for'), trusted);
    event.context.client = address === undefined ? undefined : clientKeyOf(address);
  };
}

/**
 * The client a request counts as in the query pool and the MCP rate: set by {@link createClientMiddleware}, else the
 * socket's remote address; undefined for requests with no socket (app.fetch), which are one client.
 */
export function requestClientOf(event: H3Event): string | undefined {
  if ('client' in event.context) return event.context.client as string | undefined;
  const address = getRequestIP(event);
  return address === undefined ? undefined : clientKeyOf(address);
}
