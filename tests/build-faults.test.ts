import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, cp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { JOURNAL, recoverTree } from '../generator/emit/write-tree.ts';
import { BuildError } from '../generator/errors.ts';
import { readManifestSync } from '../runtime/manifest.ts';
import { createServer } from '../server/app.ts';
import { makeTestConfig, ROOT, snapshotTree } from './helpers/catalog.ts';
import { sampleConfig } from './helpers/sample.ts';
import { mountSmallDisk, unmount } from './helpers/small-disk.ts';

type TestConfig = Awaited<ReturnType<typeof makeTestConfig>>;

const COLLECTION = 'collections/natural-earth.yaml';
const COLLECTION_KEY = 'api/collections/natural-earth/index.json';

/** A test catalog with its own dist/, built once, with the sample build's caches so that builds read no data. */
async function makeBuiltCatalog(distDir?: string): Promise<TestConfig> {
  const made = await makeTestConfig();
  const config = distDir ? { ...made, distDir } : made;
  await cp(sampleConfig().cacheDir, config.cacheDir, { recursive: true });
  await buildCatalog({ config });
  return config;
}

/** Adds a sentence to the natural-earth collection's description, which many documents and pages show; returns the record before. */
async function editCatalog(config: TestConfig, text: string): Promise<string> {
  const path = join(config.catalogDir, COLLECTION);
  const record = await readFile(path, 'utf8');
  await writeFile(path, record.replace(/^description: >-\n/m, `description: >-\n  ${text}\n`));
  return record;
}

/** The SHA-256 of every file of a tree, by path; `_geoshelf/` (the server's own files) left out on request. */
async function hashTree(dir: string, options: { internal?: boolean } = {}): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  for (const [path, file] of await snapshotTree(dir)) {
    if (options.internal === false && path.startsWith('_geoshelf/')) continue;
    hashes.set(path, createHash('sha256').update(file.bytes).digest('hex'));
  }
  return new Map([...hashes].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Folders a build leaves beside dist/ while it runs. */
async function listLeftovers(config: TestConfig): Promise<string[]> {
  return (await readdir(join(config.distDir, '..'))).filter((name) => /^dist\.(staging|old)-\d+$/.test(name));
}

/** Starts `npm run build` (node generator/cli.ts) on the test catalog. */
function startBuild(config: TestConfig, args: string[] = [], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ['generator/cli.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env, CI: 'true', GEOSHELF_CATALOG_DIR: config.catalogDir, GEOSHELF_DATA_DIR: config.dataDir, GEOSHELF_DIST_DIR: config.distDir,
      GEOSHELF_CACHE_DIR: config.cacheDir, GEOSHELF_BASE_URL: config.baseUrl, GEOSHELF_BUILD_CONCURRENCY: '2', ...env,
    },
  });
}

/** Waits, checking as often as the event loop turns, until `ready()` holds (true) or the process has exited (false). */
async function waitFor(child: ChildProcess, ready: () => boolean): Promise<boolean> {
  const until = performance.now() + 60_000;
  while (child.exitCode === null && child.signalCode === null && performance.now() < until) {
    if (ready()) return true;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return false;
}

/** Where a killed build was: still writing beside dist/, among its renames into dist/, or past them. */
type Phase = 'writing' | 'renaming' | 'done';

/**
 * Runs `npm run build`, freezes it (SIGSTOP) as soon as `ready` holds, notes where it stands, and kills it
 * (SIGKILL). Freezing first makes the note true of the moment of the kill: the renames take milliseconds.
 */
async function runAndKill(config: TestConfig, ready: (staging: string) => boolean, args: string[] = [], env: Record<string, string> = {}): Promise<Phase> {
  const manifestPath = join(config.distDir, 'manifest.json');
  const before = await readFile(manifestPath);
  const child = startBuild(config, args, env);
  const staging = `${config.distDir}.staging-${child.pid}`;
  const alive = await waitFor(child, () => ready(staging));
  if (alive) child.kill('SIGSTOP');
  const manifest = await readFile(manifestPath).catch(() => undefined);
  const phase: Phase = !alive || !manifest?.equals(before) ? 'done' : existsSync(join(staging, JOURNAL)) ? 'renaming' : 'writing';
  if (alive) {
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
    expect(child.signalCode).toBe('SIGKILL');
  } else if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
  return phase;
}

/**
 * What a server started on the tree serves: every file its manifest lists either with the bytes of the previous
 * tree or not at all (never bytes its manifest does not name), and the collection's detail as before.
 */
async function expectServedAsBefore(config: TestConfig, previous: Map<string, string>, options: { exact: boolean }): Promise<void> {
  const server = createServer({ config });
  try {
    const store = server.snapshot().store;
    let served = 0;
    for (const key of Object.keys(store.manifest.files)) {
      const body = store.get(key, { br: false, gzip: false });
      if (!body && !options.exact) continue;
      expect({ key, sha256: body && createHash('sha256').update(body.bytes).digest('hex') }).toEqual({ key, sha256: previous.get(key) });
      served++;
    }
    expect(served).toBeGreaterThan(0);
    const detail = await server.fetch(new Request('http://localhost/api/collections/natural-earth'));
    expect(detail.status).toBe(200);
    expect(createHash('sha256').update(Buffer.from(await detail.arrayBuffer())).digest('hex')).toBe(previous.get(COLLECTION_KEY));
    expect((await server.fetch(new Request('http://localhost/'))).status).toBe(200);
  } finally {
    await server.close();
  }
}

/**
 * The next build succeeds, clears what the killed one left, and leaves a tree that agrees with its manifest: every
 * file listed with the bytes it lists (siblings with their sizes), and no other public file.
 */
async function expectNextBuildRepairs(config: TestConfig, edit: string): Promise<void> {
  await buildCatalog({ config });
  expect(await listLeftovers(config)).toEqual([]);
  const manifest = readManifestSync(config.distDir)!;
  const tree = await snapshotTree(config.distDir);
  const expected = new Map<string, string>();
  for (const [key, entry] of Object.entries(manifest.files)) {
    expected.set(key, entry.sha256);
    if (entry.br !== undefined) expected.set(`${key}.br`, `${entry.br} bytes`);
    if (entry.gz !== undefined) expected.set(`${key}.gz`, `${entry.gz} bytes`);
  }
  const found = new Map<string, string>();
  for (const [path, file] of tree) {
    if (path === 'manifest.json' || path.startsWith('_geoshelf/')) continue;
    found.set(path, /\.(br|gz)$/.test(path) && !Object.hasOwn(manifest.files, path) ? `${file.bytes.length} bytes` : createHash('sha256').update(file.bytes).digest('hex'));
  }
  expect(new Map([...found].sort())).toEqual(new Map([...expected].sort()));
  expect(await readFile(join(config.distDir, COLLECTION_KEY), 'utf8')).toContain(edit);
}

describe('a build killed part way', () => {
  let config: TestConfig;
  let edits = 0;
  /** Edits the catalog anew, so the next build has changes to write, and returns the edit and the tree before it. */
  const prepare = async () => {
    const edit = `Edit number ${++edits} for a killed build.`;
    const previous = await hashTree(config.distDir);
    const record = await editCatalog(config, edit);
    return { edit, previous, record };
  };
  /**
   * Kills builds at a point until one is killed in the phase wanted (a kill that lands elsewhere is repaired by
   * the next build and tried again), then checks what that phase must leave.
   */
  const killIn = async (wanted: Phase, ready: (staging: string) => boolean, check: (killed: Awaited<ReturnType<typeof prepare>>) => Promise<void>, args: string[] = [], env: () => Promise<Record<string, string>> = async () => ({})) => {
    for (let attempt = 0; attempt < 8; attempt++) {
      const killed = await prepare();
      const phase = await runAndKill(config, ready, args, await env());
      if (phase === wanted) return check(killed);
      await expectNextBuildRepairs(config, killed.edit);
    }
    throw new Error(`no build was killed while ${wanted} in 8 tries`);
  };

  beforeAll(async () => {
    config = await makeBuiltCatalog();
  });
  afterAll(async () => {
    await rm(config.root, { recursive: true, force: true });
  });

  it.each([
    ['while it reads the data files (a cold cache)', [], 2500],
    ['as soon as its staging folder appears', [], 0],
    ['once every changed file and the manifest are staged', [], 0, 'manifest.json'],
    ['a full build (--full), while it writes its fresh tree', ['--full'], 0],
  ] as const)('%s leaves dist/ byte for byte as it was, still served, and the next build repairs it', async (_, args, delayMs, staged?: string) => {
    let started = 0;
    const ready = (staging: string) => performance.now() - started >= delayMs && existsSync(staged ? join(staging, staged) : delayMs > 0 ? config.distDir : staging);
    const cold = async (): Promise<Record<string, string>> => {
      started = performance.now();
      return delayMs > 0 ? { GEOSHELF_CACHE_DIR: join(config.root, `cold-cache-${edits}`) } : {};
    };
    await killIn('writing', ready, async ({ edit, previous }) => {
      expect(await hashTree(config.distDir)).toEqual(previous);
      await expectServedAsBefore(config, previous, { exact: true });
      await expectNextBuildRepairs(config, edit);
    }, [...args], cold);
  });

  it('among its renames into dist/, serves only the previous bytes, and the next build finishes the renames', async () => {
    await killIn('renaming', (staging) => existsSync(join(staging, JOURNAL)), async ({ previous, record }) => {
      await expectServedAsBefore(config, previous, { exact: false });
      // The edit is undone before the next build: one that only compared its output with the old manifest would
      // take the renamed files for unchanged and keep their new bytes. Finishing the renames first avoids that.
      await writeFile(join(config.catalogDir, COLLECTION), record);
      await buildCatalog({ config });
      expect(await listLeftovers(config)).toEqual([]);
      expect(await hashTree(config.distDir, { internal: false })).toEqual(new Map([...previous].filter(([path]) => !path.startsWith('_geoshelf/'))));
    });
  });

  it('between the two renames of a full build (no dist/, only dist.old-<pid>), has its tree put back by the recovery every build runs first', async () => {
    const previous = await hashTree(config.distDir);
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    await rename(config.distDir, `${config.distDir}.old-${dead}`);
    await recoverTree(config.distDir);
    expect(await hashTree(config.distDir)).toEqual(previous);
    expect(await listLeftovers(config)).toEqual([]);
  });
});

// Whether a tmpfs can be mounted here is known before the tests are collected; the disk itself is mounted by the suite.
const probe = await mountSmallDisk('96m');
if ('dir' in probe) await unmount(probe.dir);
else console.warn(`build-faults: the full-disk tests are skipped: ${probe.reason}`);

describe.skipIf('reason' in probe)('a build into a full disk', () => {
  let mount: string;
  let config: TestConfig;
  let previous: Map<string, string>;
  let filler: string;

  beforeAll(async () => {
    const disk = await mountSmallDisk('96m');
    if ('reason' in disk) throw new Error(disk.reason);
    mount = disk.dir;
    filler = join(mount, 'filler');
    config = await makeBuiltCatalog(join(mount, 'dist'));
    previous = await hashTree(config.distDir);
    // Fill the disk to the last block: in large pieces, then in pages.
    for (const size of [2 ** 20, 4096]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          await appendFile(filler, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
    await editCatalog(config, 'Edited on a full disk.');
  });
  afterAll(async () => {
    if (mount) await unmount(mount);
    if (config) await rm(config.root, { recursive: true, force: true });
  });

  it.each([
    ['an incremental build', false],
    ['a full build', true],
  ])('%s fails with DiskFull naming dist/, removes its staging folder and leaves dist/ as it was', async (_, full) => {
    const error = await buildCatalog({ config, full }).then(() => undefined, (failure: unknown) => failure);
    expect(error).toBeInstanceOf(BuildError);
    expect((error as BuildError).issues).toEqual([expect.objectContaining({ code: 'DiskFull', source: config.distDir })]);
    expect(await listLeftovers(config)).toEqual([]);
    expect(await hashTree(config.distDir)).toEqual(previous);
    await expectServedAsBefore(config, previous, { exact: true });
  });

  it('npm run build says the disk is full and what to do, and exits 1', async () => {
    const child = startBuild(config);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain(`${config.distDir}: no space was left on its disk`);
    expect(stderr).toContain('[DiskFull]');
    expect(stderr).toMatch(/DiskFull: The disk that holds the built tree is full\. Free space on it/);
    expect(await hashTree(config.distDir)).toEqual(previous);
  });

  it('builds once space is freed', async () => {
    await rm(filler);
    await buildCatalog({ config });
    expect(await readFile(join(config.distDir, COLLECTION_KEY), 'utf8')).toContain('Edited on a full disk.');
    expect(await listLeftovers(config)).toEqual([]);
  });
});
