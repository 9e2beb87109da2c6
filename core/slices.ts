/**
 * Work that can give the event loop back between its steps: a generator that yields wherever it may pause, and
 * returns its result. The server loads a new build this way while it keeps answering from the previous one
 * (server/catalog.ts); the build and the tests run the same work at once.
 */
export type Sliced<T> = Generator<void, T, void>;

/** Runs sliced work to its end without pausing. */
export function runAtOnce<T>(work: Sliced<T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs sliced work, giving the event loop a turn whenever it has held it for `sliceMs`: requests that arrive
 * meanwhile wait for one slice at most, not for the whole work.
 */
export async function runInSlices<T>(work: Sliced<T>, sliceMs = 8): Promise<T> {
  let since = performance.now();
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    if (performance.now() - since >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      since = performance.now();
    }
  }
}

/** Elements sorted or merged between two pauses of `sortSlices`. */
const SORT_RUN = 8192;

/**
 * Sorts an array in slices: runs of a few thousand elements sorted one per step, then merged pairwise a few
 * thousand elements per step. The sort is stable, as `Array.prototype.sort` is. Returns a new array.
 */
export function* sortSlices<T>(values: readonly T[], compare: (a: T, b: T) => number): Sliced<T[]> {
  let from = values.slice();
  for (let start = 0; start < from.length; start += SORT_RUN) {
    const run = from.slice(start, start + SORT_RUN).sort(compare);
    for (let at = 0; at < run.length; at++) from[start + at] = run[at]!;
    yield;
  }
  let into = new Array<T>(from.length);
  for (let width = SORT_RUN; width < from.length; width *= 2) {
    let steps = 0;
    for (let left = 0; left < from.length; left += 2 * width) {
      const middle = Math.min(left + width, from.length);
      const end = Math.min(left + 2 * width, from.length);
      let a = left;
      let b = middle;
      for (let at = left; at < end; at++) {
        into[at] = b >= end || (a < middle && compare(from[a]!, from[b]!) <= 0) ? from[a++]! : from[b++]!;
        if (++steps % SORT_RUN === 0) yield;
      }
    }
    [from, into] = [into, from];
  }
  return from;
}
