import type { Steps } from './protocol.ts';

/**
 * Where a query's time went (the protocol's Steps), in milliseconds per named step, in the order the steps ran:
 * the API process's (`parse`, `token`, `check`, `wait` for a worker, `hop` to it and back, `shape`) and the
 * worker's (`sandbox`, `query`, `rows`). Surfaces send them as a Server-Timing header (server/queries.ts), and
 * `npm run bench -- queries` reads that header to print where the time goes.
 */

/** The names of the steps, each given once here (a step name is never taken from a request). */
export const STEP = {
  /** Reading the request body. */
  body: 'body',
  /** Parsing and checking the request's fields. */
  parse: 'parse',
  /** Making the query token, or reading a token given. */
  token: 'token',
  /** The SQL check (layer 1 of the sandbox), with the sources resolved. */
  check: 'check',
  /** Waiting for a worker. */
  wait: 'wait',
  /** Taking the kept sandbox of the files, or opening one. */
  sandbox: 'sandbox',
  /** DuckDB's run (for bounds and tiles, all the worker's work past the sandbox). */
  query: 'query',
  /** Turning a page's rows into JSON or Arrow, in the worker. */
  rows: 'rows',
  /** The task's trip to the worker and the answer's back. */
  hop: 'hop',
  /** Making the response. */
  shape: 'shape',
} as const;

/** A step's name. */
export type StepName = (typeof STEP)[keyof typeof STEP];

/** A stopwatch that records the time since its last lap under a step's name (adding to a step met before). */
export interface StepClock {
  lap: (step: StepName) => void;
  /** Records steps timed elsewhere (the pool's and the worker's) for the time since the last lap. */
  add: (steps: Steps | undefined) => void;
  steps: Steps;
}

/** Starts a stopwatch; `steps` fills as laps are taken. */
export function startSteps(): StepClock {
  const steps: Steps = Object.create(null) as Steps;
  let mark = performance.now();
  return {
    steps,
    lap(step) {
      const now = performance.now();
      steps[step] = (steps[step] ?? 0) + (now - mark);
      mark = now;
    },
    add(timed) {
      if (!timed) return;
      for (const [step, ms] of Object.entries(timed)) steps[step] = (steps[step] ?? 0) + ms;
      mark = performance.now();
    },
  };
}

/** The sum of a set of steps, in milliseconds. */
export function totalOf(steps: Steps): number {
  return Object.values(steps).reduce((sum, ms) => sum + ms, 0);
}

/**
 * A Server-Timing header value (W3C Server Timing): `name;dur=ms` per step, to a tenth of a millisecond, with
 * `total` last. Step names are fixed by the code, never by a request.
 */
export function serverTiming(steps: Steps): string {
  const entries = Object.entries(steps).map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`);
  return [...entries, `total;dur=${totalOf(steps).toFixed(1)}`].join(', ');
}
