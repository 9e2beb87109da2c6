import { cp, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import type { ModelFile } from '../runtime/manifest.ts';
import { readPmTilesInfo } from '../runtime/pmtiles.ts';
import { SETTINGS } from '../runtime/config.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { sampleConfig } from './helpers/sample.ts';
import {
  configForCheckout, copyCheckout, copyFiles, editOneRecord, listCachedFiles, listCachePaths, listSteps, readJobEnv, readWorkflow,
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

const runOf = (workflow: Workflow, pattern: RegExp) => listSteps(workflow).find((step) => pattern.test(step.run ?? ''));

describe('docs/ci-workflow.yml', () => {
  it('runs npm ci, then npm scripts that package.json has, build before publish', async () => {
    const workflow = await readWorkflow();
    const scripts = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const runs = listSteps(workflow).map((step) => step.run ?? '').join('\n');
    const used = [...runs.matchAll(/npm run ([\w:-]+)/g)].map((match) => match[1]!);
    expect(used).toEqual(['build', 'publish']);
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

describe('the workflow\'s caches', () => {
  let previous: string;
  let store: string;
  let cached: string[];
  let env: Record<string, string>;
  let patterns: string[];
  let manifestBefore: string;
  let firstTwins: { made: number; current: number };
  const folders: string[] = [];
  const checkout = async (prefix: string) => {
    const folder = await makeTempDir(prefix);
    folders.push(folder);
    await copyCheckout(folder);
    return folder;
  };

  // The run before: a checkout holding the twins the sample build made, but one, and its build caches.
  beforeAll(async () => {
    const workflow = await readWorkflow();
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
  });
  afterAll(async () => {
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('hold every twin the build makes, its build caches, and no file a checkout has', async () => {
    expect(firstTwins).toEqual({ made: 1, current: 26 });
    const { model } = JSON.parse(await readFile(join(configForCheckout(previous, env).distDir, '_geoshelf/model.json'), 'utf8')) as ModelFile;
    const twinPaths = model.collections.flatMap((collection) => collection.datasets).flatMap((dataset) => dataset.files).flatMap((file) => file.formats)
      .flatMap((format) => format.sources).flatMap((source) => (source.location.type === 'file' && source.location.path.endsWith('.pmtiles') ? [source.location.path] : []))
      .map((path) => `${env.GEOSHELF_DATA_DIR}/${path}`);
    expect(twinPaths.length).toBeGreaterThan(0);
    expect(cached.filter((path) => path.endsWith('.pmtiles'))).toEqual([...new Set(twinPaths)].sort());
    expect(cached).toContain(`${env.GEOSHELF_DATA_DIR}/${SMALL_TWIN}`);
    expect(cached).toEqual(expect.arrayContaining([`${env.GEOSHELF_CACHE_DIR}/records.json`, `${env.GEOSHELF_CACHE_DIR}/data-facts.json`]));
    expect(await listCachedFiles(await checkout('geoshelf-ci-clean-'), patterns)).toEqual([]);
  });

  it('let a fresh checkout rebuild a one-record edit making no twin and reading no data file, into the tree a warm checkout builds', async () => {
    const fresh = await checkout('geoshelf-ci-fresh-');
    await copyFiles(store, fresh, cached);
    const config = configForCheckout(fresh, env);
    const name = await editOneRecord(config.catalogDir, 'edited in CI');
    const twin = join(config.dataDir, SMALL_TWIN);
    const restored = await stat(twin);
    const result = await buildCatalog({ config });
    expect(result.twins).toEqual({ made: 0, current: 27 });
    expect(result.dataFilesRead).toBe(0);
    expect((await stat(twin)).mtimeMs).toBe(restored.mtimeMs);
    const land = JSON.parse(await readFile(join(config.distDir, 'api/collections/natural-earth/datasets/land/index.json'), 'utf8')) as { dataset: { name: string } };
    expect(land.dataset.name).toBe(name);

    const warm = configForCheckout(previous, env);
    await editOneRecord(warm.catalogDir, 'edited in CI');
    expect((await buildCatalog({ config: warm })).mode).toBe('incremental');
    expect(await readFile(join(config.distDir, 'manifest.json'), 'utf8')).toBe(await readFile(join(warm.distDir, 'manifest.json'), 'utf8'));
  });

  it('never give a wrong tree when stale: a restored twin of other data is made again, and the tree is the one before', async () => {
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
  });
});
