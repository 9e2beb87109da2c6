import { describe, expect, it } from 'vitest';
import { runAtOnce, runInSlices, sortSlices, type Sliced } from '../core/slices.ts';

function* sumTo(limit: number): Sliced<number> {
  let sum = 0;
  for (let step = 1; step <= limit; step++) {
    sum += step;
    yield;
  }
  return sum;
}

describe('sliced work', () => {
  it('gives the same result at once and in slices', async () => {
    expect(runAtOnce(sumTo(1000))).toBe(500_500);
    expect(await runInSlices(sumTo(1000), 0)).toBe(500_500);
  });

  it('lets other callbacks run between its slices', async () => {
    let ran = 0;
    let done = false;
    const tick = () => {
      ran++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    await runInSlices(sumTo(50), 0);
    done = true;
    expect(ran).toBeGreaterThanOrEqual(10);
  });

  it.each([0, 1, 8191, 8192, 8193, 50_000])('sorts %i strings as Array.prototype.sort does', (size) => {
    let seed = size + 1;
    const random = () => (seed = (seed * 48271) % 2147483647);
    const words = Array.from({ length: size }, () => random().toString(36));
    const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    expect(runAtOnce(sortSlices(words, compare))).toEqual(words.slice().sort(compare));
  });

  it('keeps equal elements in their order', () => {
    const pairs = Array.from({ length: 30_000 }, (_, at) => ({ key: at % 7, at }));
    const sorted = runAtOnce(sortSlices(pairs, (a, b) => a.key - b.key));
    expect(sorted.map((pair) => pair.at)).toEqual(pairs.slice().sort((a, b) => a.key - b.key).map((pair) => pair.at));
  });
});
