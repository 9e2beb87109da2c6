/**
 * Reads docs/ci-workflow.yml the way GitHub Actions would for what geoshelf cares about (its environment, its
 * commands, its cache paths), and plays a fresh checkout with those caches restored. Shared by
 * tests/ci-workflow.test.ts and the `ci` bench section, so both follow the workflow users copy.
 */
import { execFile, spawn } from 'node:child_process';
import { cp, glob, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { loadConfig, SETTINGS, type Config } from '../../runtime/config.ts';

/** The repository root. */
const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');

/** Where the workflow users copy lives. */
export const WORKFLOW_PATH = join(ROOT, 'docs', 'ci-workflow.yml');

/** One step of a job. */
export interface WorkflowStep {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string | number | boolean>;
}

/** The parts of a workflow file the checks read. */
export interface Workflow {
  on: { push?: { branches?: string[] }; schedule?: { cron: string }[] };
  env?: Record<string, string>;
  jobs: Record<string, { env?: Record<string, string>; steps: WorkflowStep[] }>;
}

/** Parses docs/ci-workflow.yml. */
export async function readWorkflow(path = WORKFLOW_PATH): Promise<Workflow> {
  return parse(await readFile(path, 'utf8')) as Workflow;
}

/** Every step of every job, in order. */
export function listSteps(workflow: Workflow): WorkflowStep[] {
  return Object.values(workflow.jobs).flatMap((job) => job.steps);
}

/** The contexts an expression may read. */
export interface ExpressionContexts {
  env?: Record<string, string>;
  vars?: Record<string, string>;
  secrets?: Record<string, string>;
}

/**
 * Replaces `${{ env.NAME }}`, `${{ secrets.NAME }}` and `${{ vars.NAME }}` expressions as Actions would, from the given contexts; any
 * other expression, or a name the context lacks, throws, so a check never runs on text Actions would not produce.
 */
export function expandExpressions(text: string, contexts: ExpressionContexts): string {
  return text.replace(/\$\{\{\s*(env|vars|secrets)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, context: keyof ExpressionContexts, name: string) => {
    const value = contexts[context]?.[name];
    if (value === undefined) throw new Error(`${context}.${name} is not defined for this expansion`);
    return value;
  }).replace(/\$\{\{[^}]*\}\}/g, (expression) => {
    throw new Error(`cannot expand ${expression}`);
  });
}

/** The workflow's and its jobs' environment, with repository variables filled from `vars`. */
export function readJobEnv(workflow: Workflow, vars: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  const layers = [workflow.env ?? {}, ...Object.values(workflow.jobs).map((job) => job.env ?? {})];
  for (const layer of layers) for (const [name, value] of Object.entries(layer)) env[name] = expandExpressions(String(value), { env, vars });
  return env;
}

/** The `path` lines of every `actions/cache` step, expanded: what a restore puts back into the checkout. */
export function listCachePaths(workflow: Workflow, env: Record<string, string>): string[] {
  return listSteps(workflow)
    .filter((step) => step.uses?.startsWith('actions/cache@'))
    .flatMap((step) => String(step.with?.path ?? '').split('\n'))
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => expandExpressions(line, { env }));
}

/** The files under `checkout` that the cache paths (globs or folders) take, relative and sorted. */
export async function listCachedFiles(checkout: string, patterns: string[]): Promise<string[]> {
  const files = new Set<string>();
  for (const pattern of patterns) {
    for await (const match of glob(pattern, { cwd: checkout })) {
      const info = await stat(join(checkout, match));
      if (info.isFile()) files.add(match);
      // A folder is cached whole, as actions/cache does.
      else if (info.isDirectory()) for await (const inner of glob(`${match}/**/*`, { cwd: checkout })) if ((await stat(join(checkout, inner))).isFile()) files.add(inner);
    }
  }
  return [...files].sort();
}

/** Copies files between checkouts keeping their mtimes, as a cache restore (tar) does. */
export async function copyFiles(from: string, to: string, files: string[]): Promise<void> {
  for (const file of files) {
    await mkdir(dirname(join(to, file)), { recursive: true });
    await cp(join(from, file), join(to, file), { preserveTimestamps: true });
  }
}

/**
 * Lays out what a fresh clone of the working tree would hold in `folders`: every tracked or new file git does not
 * ignore, with the working tree's content (so uncommitted edits count), and nothing git ignores.
 */
export async function copyCheckout(to: string, folders: string[] = ['catalog-data']): Promise<void> {
  const { stdout } = await promisify(execFile)('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...folders], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  // A worktree's node_modules may be a symlink, which the `node_modules/` ignore rule does not match.
  const files = stdout.split('\0').filter((file) => file && file !== 'node_modules' && !file.startsWith('node_modules/'));
  for (const file of files) {
    const exists = await stat(join(ROOT, file)).then(() => true, () => false);
    if (!exists) continue;
    await mkdir(dirname(join(to, file)), { recursive: true });
    await cp(join(ROOT, file), join(to, file));
  }
}

/** Settings for a build in `checkout` from the workflow's environment, its folders resolved in the checkout. */
export function configForCheckout(checkout: string, env: Record<string, string>, overrides: Partial<Record<keyof typeof SETTINGS, string | number>> = {}): Config {
  const folder = (name: 'catalogDir' | 'dataDir' | 'distDir' | 'cacheDir') => join(checkout, env[SETTINGS[name].env] ?? SETTINGS[name].default);
  return loadConfig(env, { catalogDir: folder('catalogDir'), dataDir: folder('dataDir'), distDir: folder('distDir'), cacheDir: folder('cacheDir'), ...overrides });
}

/** The record a "one-record edit" changes, relative to the catalog folder. */
export const EDITED_RECORD = 'datasets/natural-earth/land.yaml';

/** Renames the dataset of `EDITED_RECORD`: one record edited, as a steward's commit would. Returns the new name. */
export async function editOneRecord(catalogDir: string, tag: string): Promise<string> {
  const path = join(catalogDir, EDITED_RECORD);
  const text = await readFile(path, 'utf8');
  const match = /^name: (.+)$/m.exec(text);
  if (!match) throw new Error(`${EDITED_RECORD} has no top-level name to edit`);
  const name = `${match[1]} (${tag})`;
  await writeFile(path, text.replace(match[0], `name: ${name}`));
  return name;
}

/** What a step's command printed, and how it ended. */
export interface StepRun {
  code: number | null;
  output: string;
}

/**
 * Runs a step's `run` script as Actions does (`bash --noprofile --norc -eo pipefail`, with CI and the run's ids
 * set) in `cwd`, with the job's environment and the step's own, its expressions filled from `contexts`. The
 * caller's geoshelf and AWS variables are left out, so only what the workflow sets counts.
 */
export async function runStep(step: WorkflowStep, cwd: string, contexts: Required<ExpressionContexts>, extra: Record<string, string> = {}): Promise<StepRun> {
  if (!step.run) throw new Error(`step ${step.name ?? step.uses} has no run script`);
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(GEOSHELF_|AWS_)/.test(name)));
  const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([name, value]) => [name, expandExpressions(String(value), contexts)]));
  const env = { ...inherited, CI: 'true', GITHUB_RUN_ID: '1', GITHUB_RUN_ATTEMPT: '1', ...contexts.env, ...stepEnv, ...extra };
  const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  return { code, output };
}

/** The step of the workflow with this name. */
export function findStep(workflow: Workflow, name: string): WorkflowStep {
  const step = listSteps(workflow).find((candidate) => candidate.name === name);
  if (!step) throw new Error(`docs/ci-workflow.yml has no step named ${JSON.stringify(name)}`);
  return step;
}
