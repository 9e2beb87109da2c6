import { describe, expect, it } from 'vitest';
import { createRateLimit, type RateLimitOptions } from '../server/rate-limit.ts';

/** A limit on a clock the test moves by hand, in milliseconds. */
function limitOnClock(options: RateLimitOptions) {
  const clock = { ms: 1_000 };
  return { clock, limit: createRateLimit({ ...options, now: () => clock.ms }) };
}

const waits = (limit: ReturnType<typeof createRateLimit>, client: string | undefined, times: number) =>
  Array.from({ length: times }, () => limit.retryAfter(client));

describe('the per-client rate limit', () => {
  it.each([
    { rate: 2, passed: 4 },
    { rate: 5, passed: 10 },
  ])('lets a burst of twice the rate through ($rate a second), then asks for whole seconds of wait', ({ rate, passed }) => {
    const { limit } = limitOnClock({ rate });
    expect(waits(limit, 'a', passed)).toEqual(Array(passed).fill(0));
    expect(limit.retryAfter('a')).toBe(1);
  });

  it('serves the client again once the wait it was told has passed', () => {
    const { clock, limit } = limitOnClock({ rate: 1, burst: 1 });
    expect(limit.retryAfter('a')).toBe(0);
    expect(limit.retryAfter('a')).toBe(1);
    clock.ms += 999;
    expect(limit.retryAfter('a')).toBe(1);
    clock.ms += 1_001;
    expect(limit.retryAfter('a')).toBe(0);
  });

  it('counts each client on its own, and clients without an address as one', () => {
    const { limit } = limitOnClock({ rate: 1, burst: 1 });
    expect(waits(limit, 'a', 2)).toEqual([0, 1]);
    expect(limit.retryAfter('b')).toBe(0);
    expect(waits(limit, undefined, 2)).toEqual([0, 1]);
  });

  it('forgets the least recently seen client past maxClients, so a spray of addresses cannot grow memory', () => {
    const { limit } = limitOnClock({ rate: 1, burst: 1, maxClients: 2 });
    expect(waits(limit, 'a', 2)).toEqual([0, 1]);
    limit.retryAfter('b');
    limit.retryAfter('c');
    expect(limit.retryAfter('a')).toBe(0);
  });

  it('lets everything through at rate 0', () => {
    const { limit } = limitOnClock({ rate: 0 });
    expect(waits(limit, 'a', 1_000).every((wait) => wait === 0)).toBe(true);
  });
});
