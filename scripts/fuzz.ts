import { rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { buildCatalog } from '../generator/build.ts';
import { makeTestConfig } from '../tests/helpers/catalog.ts';
import { FUZZ_SERVER_OPTIONS, FUZZED_SURFACES, FuzzFailure, fuzzRoutes, prepareFuzz, type FuzzContext, type FuzzRunOptions, type FuzzTally } from '../tests/helpers/fuzz.ts';
import { fuzzMcp } from '../tests/helpers/fuzz-mcp.ts';
import { fuzzQueryBodies, fuzzQueryFollowUps } from '../tests/helpers/fuzz-queries.ts';
import { send, startChildServer } from '../tests/helpers/fuzz-server.ts';

/**
 * `npm run fuzz`: the properties of tests/fuzz.test.ts with many more cases. Builds the sample catalog into a
 * temporary folder, starts `npm run serve` on it as a child process, and runs every property in rounds of at most
 * 500 cases (round r uses seed S + r), so that each round repeats the same mix of requests: the server's RSS,
 * sampled after each round, must level off over the second half. Prints progress, the outcomes and the memory,
 * and exits 1 on any failure. `--only` picks properties, `--seed` and `--path` replay a counterexample.
 * @example npm run fuzz -- --runs 2000
 * @example npm run fuzz -- --only query-bodies --seed 12345 --path "17:3:1"
 */

const USAGE = 'npm run fuzz -- [--runs N (5000)] [--seed S] [--only name,name] [--path P]';
/**
 * How far RSS may still climb over the last third of the rounds. Each code path's first use, V8's heap (capped at
 * 128 MiB) and malloc's arenas make RSS climb for the first ~10,000 requests; a leak keeps climbing after that.
 */
const LATE_GROWTH_BOUND_MIB = 32;
/** Fewer rounds than this are too few to tell a leak from warm-up. */
const MIN_ROUNDS_TO_JUDGE = 6;
const ROUND_RUNS = 250;
const MIB = 2 ** 20;

type Property = { name: string; run: (context: FuzzContext, options: FuzzRunOptions) => Promise<FuzzTally> };

const PROPERTIES: Property[] = [
  ...FUZZED_SURFACES.map((surface) => ({ name: surface.name, run: (context: FuzzContext, options: FuzzRunOptions) => fuzzRoutes(context, surface.name, surface.routes, options) })),
  { name: 'query-bodies', run: fuzzQueryBodies },
  { name: 'query-follow-ups', run: fuzzQueryFollowUps },
  { name: 'mcp', run: fuzzMcp },
];

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5000' }, seed: { type: 'string' }, only: { type: 'string' }, path: { type: 'string' }, help: { type: 'boolean' } } });
  const runs = Number(values.runs);
  const only = values.only?.split(',');
  const chosen = PROPERTIES.filter((property) => !only || only.includes(property.name));
  if (values.help || !Number.isInteger(runs) || runs < 1 || chosen.length === 0) {
    console.log(`${USAGE}\nproperties: ${PROPERTIES.map((property) => property.name).join(', ')}`);
    return values.help ? 0 : 2;
  }
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 30) : Number(values.seed);
  // A replay runs the one round whose seed found the counterexample.
  const rounds = values.path ? 1 : Math.ceil(runs / ROUND_RUNS);
  console.log('building the sample catalog…');
  const config = await makeTestConfig();
  await buildCatalog({ config });
  const server = await startChildServer(config, FUZZ_SERVER_OPTIONS);
  const failures: string[] = [];
  const rss: number[] = [];
  const totals = new Map<string, FuzzTally>();
  try {
    const context = await prepareFuzz(server, [config.root, config.dataDir, config.distDir, config.catalogDir]);
    rss.push(server.rssBytes());
    console.log(`server pid ${server.pid} at ${server.origin}, RSS ${(rss[0]! / MIB).toFixed(0)} MiB after warm-up; seed ${seed}, ${runs} cases per property in ${rounds} round(s)`);
    for (let round = 0; round < rounds && server.alive(); round++) {
      for (const property of chosen.filter((candidate) => !failures.some((failure) => failure.startsWith(`${candidate.name}:`)))) {
        const options: FuzzRunOptions = { numRuns: Math.ceil(runs / rounds), seed: seed + round, ...(values.path ? { path: values.path } : {}) };
        try {
          merge(totals, property.name, await property.run(context, options));
        } catch (error) {
          const replay = error instanceof FuzzFailure ? `\nreplay: npm run fuzz -- --only ${property.name} --seed ${error.seed} --path "${error.path}"` : '';
          failures.push(`${property.name}: ${(error as Error).message}${replay}`);
          console.log(`✖ ${failures.at(-1)}\n(the other properties go on)`);
        }
        if (!server.alive()) failures.push(`the server died during ${property.name}:\n${server.stderr().slice(-2000)}`);
      }
      rss.push(server.rssBytes());
      console.log(`round ${round + 1}/${rounds}: ${[...totals.values()].reduce((sum, tally) => sum + tally.requests, 0)} requests, RSS ${(rss.at(-1)! / MIB).toFixed(0)} MiB`);
    }
    for (const [name, tally] of totals) printOutcomes(name, tally);
    if (server.alive()) {
      const health = await send(server.origin, { method: 'GET', target: '/api/health', headers: {} });
      if (health.status !== 200) failures.push(`/api/health answered ${health.status} at the end`);
      failures.push(...checkMemory(rss));
    }
    if (/unexpected error/.test(server.stderr())) failures.push(`the server logged unexpected errors:\n${server.stderr().slice(-2000)}`);
  } finally {
    await server.close();
    await rm(config.root, { recursive: true, force: true });
  }
  for (const failure of failures) console.log(`\n✖ ${failure}`);
  console.log(failures.length === 0 ? '\nno failures' : `\n${failures.length} failure(s)`);
  return failures.length === 0 ? 0 : 1;
}

/** Adds a round's tally to the property's total. */
function merge(totals: Map<string, FuzzTally>, name: string, tally: FuzzTally): void {
  const total = totals.get(name) ?? { requests: 0, statuses: new Map(), outcomes: new Map() };
  total.requests += tally.requests;
  for (const [status, count] of tally.statuses) total.statuses.set(status, (total.statuses.get(status) ?? 0) + count);
  for (const [outcome, count] of tally.outcomes) total.outcomes.set(outcome, (total.outcomes.get(outcome) ?? 0) + count);
  totals.set(name, total);
}

/** The most frequent outcomes of a property, so a run shows which paths it reached. */
function printOutcomes(name: string, tally: FuzzTally): void {
  const outcomes = [...tally.outcomes].sort((a, b) => b[1] - a[1]);
  const shown = outcomes.slice(0, 14).map(([outcome, count]) => `${String(count).padStart(6)}  ${outcome}`);
  console.log(`\n✔ ${name}: ${tally.requests} requests\n${shown.join('\n')}${outcomes.length > 14 ? `\n        … ${outcomes.length - 14} more outcomes` : ''}`);
}

/** The memory series, and a failure if RSS still climbed by more than the bound over the last third of the rounds. */
function checkMemory(series: number[]): string[] {
  const rounds = series.length - 1;
  const [first, late, last] = [series[0]!, series[rounds - Math.floor(rounds / 3)]!, series.at(-1)!];
  console.log(`\nserver RSS (MiB) after warm-up and after each round: ${series.map((bytes) => (bytes / MIB).toFixed(0)).join(' ')}`);
  const growth = (last - late) / MIB;
  if (rounds < MIN_ROUNDS_TO_JUDGE) {
    console.log(`RSS grew ${((last - first) / MIB).toFixed(0)} MiB; ${rounds} rounds are too few to judge whether it levels off (--runs ${MIN_ROUNDS_TO_JUDGE * ROUND_RUNS} or more)`);
    return [];
  }
  console.log(`RSS grew ${((last - first) / MIB).toFixed(0)} MiB in all, ${growth.toFixed(0)} MiB over the last third of the rounds (bound ${LATE_GROWTH_BOUND_MIB} MiB)`);
  return growth > LATE_GROWTH_BOUND_MIB ? [`the server's RSS grew ${growth.toFixed(0)} MiB over the last third of the rounds: a leak?`] : [];
}

process.exitCode = await main();
