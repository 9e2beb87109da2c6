import { chmod, cp, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { readModel } from '../runtime/model-file.ts';
import { readPmTilesInfo } from '../runtime/pmtiles-info.ts';
import { SETTINGS } from '../runtime/config.ts';
import { hasCommand } from '../scripts/fleet.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { sampleConfig } from './helpers/sample.ts';
import { startBucket } from './helpers/bucket.ts';
import {
  configForCheckout, copyCheckout, copyFiles, editOneRecord, findStep, listCachedFiles, listCachePaths, listSteps, readJobEnv, readWorkflow, runStep,
  type Workflow,
} from './helpers/ci-workflow.ts';

/** Repository variables as a user would set them. */
const VARS = { GEOSHELF_BASE_URL: 'https://catalog.example.org', GEOSHELF_STORAGE_BASE_URL: '' };
/** The variables `npm run publish` (the AWS SDK) and the AWS CLI read; the workflow sets no other AWS name. */
const AWS_NAMES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'];
const SETTING_NAMES = new Set<string>(Object.values(SETTINGS).map((setting) => setting.env));
/** The sample's smallest twin (10 KB from 5 KB of GeoParquet): the one the tests make again. */
const SMALL_TWIN = 'us-census/us-state-capitals/3.1.0/us-state-capitals.pmtiles';
const OTHER_TWIN = 'natural-earth/land/2.0.2/land-110m.pmtiles';

const HAS_JQ = hasCommand('jq');
if (!HAS_JQ) console.warn('tests/ci-workflow.test.ts: the CloudFront purge step is not run, jq is not installed (apt-get install -y jq)');

const runOf = (workflow: Workflow, pattern: RegExp) => listSteps(workflow).find((step) => pattern.test(step.run ?? ''));

describe('docs/ci-workflow.yml', () => {
  it('runs npm ci, then npm scripts that package.json has, build before publish', async () => {
    const workflow = await readWorkflow();
    const scripts = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const runs = listSteps(workflow).map((step) => step.run ?? '').join('\n');
    const used = [...runs.matchAll(/npm run ([\w:-]+)/g)].map((match) => match[1]!);
    expect(used.filter((script) => script === 'build' || script === 'publish')).toEqual(['build', 'publish']);
    for (const script of used) expect(scripts, script).toHaveProperty(script);
    expect(runs.indexOf('npm ci')).toBeGreaterThanOrEqual(0);
    expect(runs.indexOf('npm ci')).toBeLessThan(runs.indexOf('npm run build'));
  });

  it('sets only settings geoshelf reads, the AWS variables, and names its own commands use', async () => {
    const workflow = await readWorkflow();
    const layers = [
      ...[workflow.env ?? {}, ...Object.values(workflow.jobs).map((job) => job.env ?? {})].map((env) => ({ env, scripts: listSteps(workflow).map((step) => step.run ?? '') })),
      ...listSteps(workflow).map((step) => ({ env: step.env ?? {}, scripts: [step.run ?? ''] })),
    ];
    for (const { env, scripts } of layers) {
      for (const name of Object.keys(env)) {
        if (SETTING_NAMES.has(name) || AWS_NAMES.includes(name)) continue;
        expect(name.startsWith('GEOSHELF_'), `${name} is not a setting (runtime/config.ts SETTINGS)`).toBe(false);
        expect(scripts.some((script) => new RegExp(`\\$\\{?${name}\\b`).test(script)), `${name} is set but no command reads it`).toBe(true);
      }
    }
    expect(workflow.env?.GEOSHELF_LEDGER).toBe('frozen');
    expect(workflow.env?.GEOSHELF_BASE_URL).toContain('vars.GEOSHELF_BASE_URL');
  });

  it('reads secrets only into the environment of the steps that need them, never into a command', async () => {
    const workflow = await readWorkflow();
    const outsideStepEnv = { ...workflow, jobs: Object.values(workflow.jobs).map((job) => ({ ...job, steps: job.steps.map((step) => ({ ...step, env: {} })) })) };
    expect(JSON.stringify(outsideStepEnv)).not.toContain('secrets.');
    const secretSteps = listSteps(workflow).filter((step) => Object.values(step.env ?? {}).some((value) => String(value).includes('secrets.')));
    expect(secretSteps.map((step) => step.name)).toEqual(['Publish', 'Purge CloudFront']);
    for (const step of listSteps(workflow)) expect(step.run ?? '').not.toMatch(/\bset -x\b|\bprintenv\b|^\s*env\s*$/m);
  });

  it('publishes with the purge list the CDN step reads, on pushes to main and on a schedule, with the pinned Node', async () => {
    const workflow = await readWorkflow();
    const publish = runOf(workflow, /npm run publish/)!;
    const file = /--invalidations (\S+)/.exec(publish.run!)?.[1];
    expect(file).toBe('purge.json');
    expect(runOf(workflow, /create-invalidation/)!.run).toContain(file);
    expect(workflow.on.push?.branches).toContain('main');
    expect(workflow.on.schedule?.length).toBeGreaterThan(0);
    const pinned = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.node!;
    const setup = listSteps(workflow).find((step) => step.uses?.startsWith('actions/setup-node@'))!;
    expect(String(setup.with?.['node-version'])).toBe(pinned.split('.')[0]);
  });
});

describe('a CI run of the workflow', () => {
  let workflow: Workflow;
  let previous: string;
  let store: string;
  let cached: string[];
  let env: Record<string, string>;
  let patterns: string[];
  let manifestBefore: string;
  let firstTwins: { made: number; current: number };
  let fresh: string;
  const folders: string[] = [];
  const checkout = async (prefix: string, paths: string[] = ['catalog-data']) => {
    const folder = await makeTempDir(prefix);
    folders.push(folder);
    await copyCheckout(folder, paths);
    return folder;
  };
  const contexts = (vars: Record<string, string> = VARS, secrets: Record<string, string> = {}) => ({ env: readJobEnv(workflow, vars), vars, secrets });

  // The run before: a checkout holding the twins the sample build made, but one, and its build caches.
  beforeAll(async () => {
    workflow = await readWorkflow();
    env = readJobEnv(workflow, VARS);
    patterns = listCachePaths(workflow, env);
    previous = await checkout('geoshelf-ci-previous-');
    const config = configForCheckout(previous, env);
    const twins = (await listCachedFiles(join(ROOT, 'catalog-data/data'), ['**/*.pmtiles'])).filter((path) => path !== SMALL_TWIN);
    await copyFiles(join(ROOT, 'catalog-data/data'), config.dataDir, twins);
    await cp(sampleConfig().cacheDir, config.cacheDir, { recursive: true });
    firstTwins = (await buildCatalog({ config })).twins;
    manifestBefore = await readFile(join(config.distDir, 'manifest.json'), 'utf8');
    cached = await listCachedFiles(previous, patterns);
    store = await makeTempDir('geoshelf-ci-cache-');
    folders.push(store);
    await copyFiles(previous, store, cached);
  }, 180_000);
  afterAll(async () => {
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('caches every twin the build makes, its build caches, and no file a checkout has', async () => {
    expect(firstTwins).toEqual({ made: 1, current: 26 });
    const { model } = readModel(configForCheckout(previous, env).distDir).file;
    const twinPaths = model.collections.flatMap((collection) => collection.datasets).flatMap((dataset) => dataset.files).flatMap((file) => file.formats)
      .flatMap((format) => format.sources).flatMap((source) => (source.location.type === 'file' && source.location.path.endsWith('.pmtiles') ? [source.location.path] : []))
      .map((path) => `${env.GEOSHELF_DATA_DIR}/${path}`);
    expect(twinPaths.length).toBeGreaterThan(0);
    expect(cached.filter((path) => path.endsWith('.pmtiles'))).toEqual([...new Set(twinPaths)].sort());
    expect(cached).toContain(`${env.GEOSHELF_DATA_DIR}/${SMALL_TWIN}`);
    expect(cached).toEqual(expect.arrayContaining([`${env.GEOSHELF_CACHE_DIR}/records.json`, `${env.GEOSHELF_CACHE_DIR}/data-facts.json`]));
    expect(await listCachedFiles(await checkout('geoshelf-ci-clean-'), patterns)).toEqual([]);
  });

  it('builds a one-record edit in a fresh checkout with the caches restored, making no twin, into the tree a warm checkout builds', async () => {
    fresh = await checkout('geoshelf-ci-fresh-', ['.']);
    await symlink(await realpath(join(ROOT, 'node_modules')), join(fresh, 'node_modules'));
    await copyFiles(store, fresh, cached);
    const config = configForCheckout(fresh, env);
    const name = await editOneRecord(config.catalogDir, 'edited in CI');
    const twin = join(config.dataDir, SMALL_TWIN);
    const restored = await stat(twin);
    const build = await runStep(findStep(workflow, 'Build'), fresh, contexts());
    expect(build.code, build.output).toBe(0);
    expect(build.output).toContain('PMTiles twins: 0 made, 27 current');
    expect((await stat(twin)).mtimeMs).toBe(restored.mtimeMs);
    const land = JSON.parse(await readFile(join(config.distDir, 'api/collections/natural-earth/datasets/land/index.json'), 'utf8')) as { dataset: { name: string } };
    expect(land.dataset.name).toBe(name);

    const warm = configForCheckout(previous, env);
    await editOneRecord(warm.catalogDir, 'edited in CI');
    expect((await buildCatalog({ config: warm })).mode).toBe('incremental');
    expect(await readFile(join(config.distDir, 'manifest.json'), 'utf8')).toBe(await readFile(join(warm.distDir, 'manifest.json'), 'utf8'));
  }, 180_000);

  it('publishes as written, and hands CloudFront the purge list: every changed URL under the base URL\'s path, or one wildcard past 1,000', async () => {
    const bucket = await startBucket();
    const fakeBin = await makeTempDir('geoshelf-ci-bin-');
    folders.push(fakeBin);
    const log = join(fakeBin, 'aws.log');
    await writeFile(join(fakeBin, 'aws'), '#!/bin/sh\nprintf \'%s\\n\' "$@" > "$FAKE_AWS_LOG"\nfor arg; do case "$arg" in file://*) cp "${arg#file://}" "$FAKE_AWS_LOG.batch";; esac; done\necho I2J0INVALIDATION\n');
    await chmod(join(fakeBin, 'aws'), 0o755);
    const extra = { PATH: `${fakeBin}:${process.env.PATH}`, FAKE_AWS_LOG: log };
    const vars = { ...VARS, BUCKET: bucket.bucket, PREFIX: 'site', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_S3: bucket.endpoint, CLOUDFRONT_DISTRIBUTION_ID: 'E2EXAMPLE' };
    const secrets = { AWS_ACCESS_KEY_ID: bucket.env.AWS_ACCESS_KEY_ID!, AWS_SECRET_ACCESS_KEY: bucket.env.AWS_SECRET_ACCESS_KEY! };
    const purge = async (withVars = vars) => {
      await rm(`${log}.batch`, { force: true });
      const run = await runStep(findStep(workflow, 'Purge CloudFront'), fresh, contexts(withVars, secrets), extra);
      expect(run.code, run.output).toBe(0);
      const batch = await readFile(`${log}.batch`, 'utf8').then((text) => JSON.parse(text) as { Paths: { Quantity: number; Items: string[] }; CallerReference: string }, () => undefined);
      return { run, batch, args: batch ? (await readFile(log, 'utf8')).split('\n') : [] };
    };
    try {
      const first = await runStep(findStep(workflow, 'Publish'), fresh, contexts(vars, secrets), extra);
      expect(first.code, first.output).toBe(0);
      expect(first.output).not.toContain(secrets.AWS_SECRET_ACCESS_KEY);
      expect(await bucket.head('site/manifest.json')).toBeDefined();
      expect(await bucket.head(`site/data/${SMALL_TWIN}`)).toBeDefined();

      await editOneRecord(configForCheckout(fresh, env).catalogDir, 'edited again');
      expect((await runStep(findStep(workflow, 'Build'), fresh, contexts())).code).toBe(0);
      expect((await runStep(findStep(workflow, 'Publish'), fresh, contexts(vars, secrets), extra)).code).toBe(0);
      const urls = JSON.parse(await readFile(join(fresh, 'purge.json'), 'utf8')) as string[];
      expect(urls).toEqual(expect.arrayContaining(['/api/collections/natural-earth/datasets/land', '/collections/natural-earth/datasets/land/']));
      if (!HAS_JQ) return;
      const { batch, args } = await purge();
      expect(batch?.Paths).toEqual({ Quantity: urls.length, Items: urls });
      expect(batch?.CallerReference).toBe('1-1');
      expect(args.slice(0, 4)).toEqual(['cloudfront', 'create-invalidation', '--distribution-id', 'E2EXAMPLE']);
      expect((await purge({ ...vars, GEOSHELF_BASE_URL: 'https://example.org/catalog/' })).batch?.Paths.Items).toEqual(urls.map((url) => `/catalog${url}`));

      await writeFile(join(fresh, 'purge.json'), JSON.stringify(Array.from({ length: 1001 }, (_, index) => `/api/datasets/${index}`)));
      expect((await purge()).batch?.Paths).toEqual({ Quantity: 1, Items: ['/*'] });
      await writeFile(join(fresh, 'purge.json'), '[]');
      const none = await purge();
      expect([none.batch, none.run.output.trim()]).toEqual([undefined, 'nothing to purge']);
    } finally {
      await bucket.stop();
    }
  }, 240_000);

  it('never gives a wrong tree from a stale cache: a restored twin of other data is made again, and the tree is the one before', async () => {
    const stale = await checkout('geoshelf-ci-stale-');
    await copyFiles(store, stale, cached);
    const config = configForCheckout(stale, env);
    await cp(join(store, env.GEOSHELF_DATA_DIR!, OTHER_TWIN), join(config.dataDir, SMALL_TWIN));
    const result = await buildCatalog({ config });
    expect(result.twins).toEqual({ made: 1, current: 26 });
    const remade = await readFile(join(config.dataDir, SMALL_TWIN));
    expect(remade.equals(await readFile(join(store, env.GEOSHELF_DATA_DIR!, SMALL_TWIN)))).toBe(true);
    expect((await readPmTilesInfo(join(config.dataDir, SMALL_TWIN))).metadata.name).toBe('us-state-capitals');
    expect(await readFile(join(config.distDir, 'manifest.json'), 'utf8')).toBe(manifestBefore);
  }, 180_000);
});
