import { createTokenBuckets } from './token-buckets.ts';

/** Most clients whose buckets are kept by default; past it the least recently seen is dropped, so memory stays bounded. */
export const MAX_RATE_CLIENTS = 10_000;

/** Options of {@link createRateLimit}. */
export interface RateLimitOptions {
  /** Requests per second per client; 0 turns the bound off. */
  rate: number;
  /** Requests a rested client may send at once; twice the rate by default. */
  burst?: number;
  /** Most clients kept in memory; {@link MAX_RATE_CLIENTS} by default. */
  maxClients?: number;
  /** The clock, in milliseconds; `performance.now` by default. A test passes its own. */
  now?: () => number;
}

/** A per-client bound on requests a second, shared by whichever surface mounts it. */
export interface RateLimit {
  /**
   * Counts one request of `client` and answers 0 when it may go on, or the whole seconds it should wait (the
   * Retry-After value). Requests whose client is unknown (no address) share one bucket.
   */
  retryAfter: (client: string | undefined) => number;
}

/**
 * A rate bound per client, as token buckets (server/token-buckets.ts): each client may send `burst` requests at once,
 * then `rate` a second. The surface decides what a refusal looks like (MCP: a JSON-RPC error with status 429); the
 * client is whatever identity the surface counts, normally `requestClientOf(event)` (server/client-address.ts), so
 * two surfaces that share one limit share one client's share.
 * @example
 * const limit = createRateLimit({ rate: config.mcpRate });
 * const seconds = limit.retryAfter(requestClientOf(event));
 * if (seconds > 0) return tooManyRequests(seconds);
 */
export function createRateLimit(options: RateLimitOptions): RateLimit {
  const { rate, burst = 2 * rate, maxClients = MAX_RATE_CLIENTS, now = () => performance.now() } = options;
  if (!(rate > 0)) return { retryAfter: () => 0 };
  const buckets = createTokenBuckets({ rate, burst, maxClients });
  return { retryAfter: (client) => Math.ceil(buckets.take(client ?? 'unknown', now())) };
}
