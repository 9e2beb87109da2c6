/** Token buckets keyed by client: `take` spends a token and answers 0, or the seconds until one is there. */
export interface TokenBuckets {
  take: (client: string, now?: number) => number;
  /** Clients with a bucket kept in memory. */
  size: () => number;
}

/**
 * Per-client token buckets that refill at `rate` tokens a second up to `burst`. A bucket that has refilled to full
 * is the same as no bucket, so idle buckets are swept once per refill time; between sweeps, at most `maxClients`
 * are kept (least recently seen dropped first), so a spray of addresses cannot grow memory.
 */
export function createTokenBuckets({ rate, burst, maxClients }: { rate: number; burst: number; maxClients: number }): TokenBuckets {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const refillMs = (burst / rate) * 1000;
  let sweptAt = 0;
  const sweep = (now: number) => {
    sweptAt = now;
    for (const [client, bucket] of buckets) if (now - bucket.at >= refillMs) buckets.delete(client);
  };
  return {
    take(client, now = performance.now()) {
      if (now - sweptAt >= refillMs) sweep(now);
      const bucket = buckets.get(client);
      const tokens = bucket ? Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate) : burst;
      // Re-inserting keeps the Map in order of last use, so the first key is the one to drop.
      buckets.delete(client);
      if (buckets.size >= maxClients) buckets.delete(buckets.keys().next().value!);
      if (tokens < 1) {
        buckets.set(client, { tokens, at: now });
        return (1 - tokens) / rate;
      }
      buckets.set(client, { tokens: tokens - 1, at: now });
      return 0;
    },
    size: () => buckets.size,
  };
}
