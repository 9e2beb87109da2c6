import { describe, expect, it } from 'vitest';
import { createTileCache } from '../query/tile-cache.ts';

const tile = (size: number, mark = 0) => ({ bytes: new Uint8Array(size).fill(mark), features: size > 0 ? 1 : 0 });

function counter<T>(value: T) {
  const produce = async () => {
    produce.calls++;
    return value;
  };
  produce.calls = 0;
  return produce;
}

describe('the tile cache', () => {
  it('produces a tile once and serves it from memory after', async () => {
    const cache = createTileCache({ maxBytes: 1_000_000 });
    const produce = counter(tile(100, 7));
    expect(await cache.get('a', produce)).toEqual(tile(100, 7));
    expect(await cache.get('a', produce)).toEqual(tile(100, 7));
    expect(produce.calls).toBe(1);
    expect(cache.size().entries).toBe(1);
  });

  it('runs identical concurrent requests once, and gives every caller the same tile', async () => {
    const cache = createTileCache({ maxBytes: 1_000_000 });
    let release: (value: ReturnType<typeof tile>) => void = () => undefined;
    let calls = 0;
    const produce = () => {
      calls++;
      return new Promise<ReturnType<typeof tile>>((resolve) => (release = resolve));
    };
    const waiting = Array.from({ length: 20 }, () => cache.get('z/x/y', produce));
    release(tile(10, 1));
    const answers = await Promise.all(waiting);
    expect(calls).toBe(1);
    for (const answer of answers) expect(answer).toBe(answers[0]);
  });

  it('does not keep a failure: concurrent callers share it, the next request tries again', async () => {
    const cache = createTileCache({ maxBytes: 1_000_000 });
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('worker busy');
    };
    const results = await Promise.allSettled([cache.get('k', failing), cache.get('k', failing)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    expect(cache.size()).toEqual({ bytes: 0, entries: 0 });
    expect(await cache.get('k', counter(tile(5)))).toEqual(tile(5));
  });

  it('turns a synchronous throw of produce into a rejection', async () => {
    const cache = createTileCache({ maxBytes: 1_000_000 });
    await expect(cache.get('k', () => {
      throw new Error('bad');
    })).rejects.toThrow('bad');
  });

  it('evicts the least recently used tiles once the byte budget is passed', async () => {
    const cache = createTileCache({ maxBytes: 3 * (1000 + 200) });
    for (const key of ['a', 'b', 'c']) await cache.get(key, counter(tile(1000)));
    await cache.get('a', counter(tile(1000)));
    await cache.get('d', counter(tile(1000)));
    const again = counter(tile(1000));
    await cache.get('b', again);
    expect(again.calls).toBe(1);
    const kept = counter(tile(1000));
    await cache.get('a', kept);
    expect(kept.calls).toBe(0);
    expect(cache.size().bytes).toBeLessThanOrEqual(3 * 1200);
    expect(cache.size().entries).toBe(3);
  });

  it('counts empty tiles, so many of them still stay within the budget', async () => {
    const cache = createTileCache({ maxBytes: 10_000 });
    for (let index = 0; index < 1000; index++) await cache.get(`4/${index}/0`, counter(tile(0)));
    expect(cache.size().bytes).toBeLessThanOrEqual(10_000);
    expect(cache.size().entries).toBeLessThan(100);
  });

  it('returns a tile larger than the whole budget without keeping it', async () => {
    const cache = createTileCache({ maxBytes: 500 });
    await cache.get('small', counter(tile(10)));
    expect((await cache.get('huge', counter(tile(5000)))).bytes.byteLength).toBe(5000);
    expect(cache.size().entries).toBe(1);
  });
});
