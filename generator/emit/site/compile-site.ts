import { hash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TreeFile } from '../../../core/static-files.ts';
import type { SiteRenderer } from '../../../src/render-entry.ts';
import { contentTypeOf } from './content-types.ts';

/** What a compilation depends on, relative to the repository root: the site's sources and how it is compiled. */
const SOURCES = ['src', 'public', 'core', 'schemas', 'astro.config.mjs', 'package-lock.json', 'generator/emit/site/compile-site.ts'];
const ASSET_PREFIX = '_site/';

/** The compiled site: a page renderer and the static files every page links to. */
export interface CompiledSite {
  renderer: SiteRenderer;
  /** Reads the client bundles, styles and `public/` files, with keys under `_site/`. */
  readAssets: () => Promise<TreeFile[]>;
  /** Hash of every source the pages depend on; a change renders every page again. */
  fingerprint: string;
}

/** Options of `compileSite`. */
export interface CompileSiteOptions {
  root: string;
  /** Folder of compiled sites, one per source hash; it depends on the code alone, not on the catalog. */
  cacheDir: string;
  /** `hashSources(root)` when the caller has it already (the build digests it with its inputs). */
  sourceHash?: string;
  log?: (line: string) => void;
}

/**
 * Compiles the web app once per source change: Vite bundles the client entries (`src/client/entries/*.ts`) and
 * the styles for the browser, and compiles the Astro views for Node with Astro's own Vite plugins, so the generator
 * can render every page with Astro's container API. Both outputs are cached under the cache folder by a hash of
 * their sources, so an unchanged site costs one hash of its files.
 */
export async function compileSite(options: CompileSiteOptions): Promise<CompiledSite> {
  const { root, log } = options;
  const fingerprint = options.sourceHash ?? (await hashSources(root));
  const outDir = join(options.cacheDir, fingerprint);
  if (!existsSync(outDir)) {
    const started = performance.now();
    // Built aside and renamed into place, so builds running at once never read a half-written compilation.
    const staging = `${outDir}.staging-${process.pid}-${Date.now()}`;
    try {
      await buildClient(root, join(staging, 'client'));
      await buildServer(root, join(staging, 'server'));
      await rename(staging, outDir).catch((error: NodeJS.ErrnoException) => {
        if (!existsSync(outDir)) throw error;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    log?.(`compiled the web app in ${Math.round(performance.now() - started)} ms`);
    await pruneCompilations(options.cacheDir, fingerprint);
  }
  const manifest = JSON.parse(await readFile(join(outDir, 'client', '.vite', 'manifest.json'), 'utf8')) as Record<string, { file: string; isEntry?: boolean; css?: string[] }>;
  const urls: Record<string, string> = {};
  for (const [source, chunk] of Object.entries(manifest)) {
    if (!chunk.isEntry) continue;
    const name = source.endsWith('.css') ? 'css' : source.replace(/^.*\//, '').replace(/\.ts$/, '');
    urls[name] = `/${ASSET_PREFIX}${chunk.file}`;
    // Styles an entry imports are its own stylesheet, linked only by the pages that run it.
    chunk.css?.forEach((file, position) => (urls[`${name}.css${position || ''}`] = `/${ASSET_PREFIX}${file}`));
  }
  const module = (await import(pathToFileURL(join(outDir, 'server', 'render-entry.js')).href)) as typeof import('../../../src/render-entry.ts');
  const renderer = await module.createSiteRenderer(urls);
  const readAssets = async () => {
    const assets = [...(await readTree(join(outDir, 'client'), ASSET_PREFIX)), ...(await readTree(join(root, 'public'), ASSET_PREFIX))];
    return assets.filter((file) => !file.key.includes('/.vite/'));
  };
  return { renderer, readAssets, fingerprint };
}

/** Compilations kept besides the current one, for builds of other checkouts or branches sharing the cache. */
const KEPT_COMPILATIONS = 3;

/** Removes all but the newest compilations, so the cache does not grow with every edit of the site. */
async function pruneCompilations(cacheDir: string, current: string): Promise<void> {
  const entries = await readdir(cacheDir, { withFileTypes: true });
  const others = await Promise.all(
    entries
      .filter((entry) => entry.isDirectory() && entry.name !== current && !entry.name.includes('.staging-'))
      .map(async (entry) => ({ path: join(cacheDir, entry.name), mtime: (await stat(join(cacheDir, entry.name))).mtimeMs })),
  );
  others.sort((a, b) => b.mtime - a.mtime);
  await Promise.all(others.slice(KEPT_COMPILATIONS).map(({ path }) => rm(path, { recursive: true, force: true })));
}

async function buildClient(root: string, outDir: string): Promise<void> {
  const { build } = await import('vite');
  const entries = (await readdir(join(root, 'src', 'client', 'entries'))).filter((name) => name.endsWith('.ts')).sort();
  // Every page links the base stylesheet; a feature's styles come with the entry or chunk that imports them.
  const stylesEntry = join(root, 'src', 'styles', 'site.css');
  await build({
    configFile: false,
    root,
    base: `/${ASSET_PREFIX}`,
    publicDir: false,
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      manifest: true,
      target: 'es2022',
      assetsDir: 'assets',
      chunkSizeWarningLimit: 4096,
      rolldownOptions: { input: [...entries.map((name) => join(root, 'src', 'client', 'entries', name)), stylesEntry] },
    },
  });
}

async function buildServer(root: string, outDir: string): Promise<void> {
  const { build } = await import('vite');
  const { getViteConfig } = await import('astro/config');
  const configure = getViteConfig({ logLevel: 'warn', build: { ssr: join(root, 'src', 'render-entry.ts'), outDir, emptyOutDir: true, rolldownOptions: { external: [/^astro(\/|$)/] } } }, { root, logLevel: 'error' });
  const config = await configure({ mode: 'production', command: 'build' });
  await build({ ...config, root, configFile: false });
}

/** A hash of the web app's sources: its compilation, and the pages rendered with it, depend on nothing else. */
export async function hashSources(root: string): Promise<string> {
  const parts: string[] = [];
  for (const source of SOURCES) {
    const path = join(root, source);
    if (!existsSync(path)) continue;
    for (const file of await listFiles(path)) parts.push(`${relative(root, file)}\0${hash('sha256', await readFile(file), 'hex')}`);
  }
  return hash('sha256', parts.sort().join('\n'), 'hex').slice(0, 16);
}

async function listFiles(path: string): Promise<string[]> {
  if (!path.endsWith(sep) && /\.[a-z]+$/i.test(path)) return [path];
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

async function readTree(dir: string, prefix: string): Promise<TreeFile[]> {
  if (!existsSync(dir)) return [];
  const files = await listFiles(dir);
  return Promise.all(
    files.sort().map(async (file) => {
      const key = prefix + relative(dir, file).split(sep).join('/');
      return { key, body: await readFile(file), type: contentTypeOf(key) };
    }),
  );
}
