import { cp, mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { loadConfig, type Config } from '../../runtime/config.ts';

/** The repository root. */
export const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');

/** A fresh temporary folder. */
export function makeTempDir(prefix = 'geoshelf-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/**
 * Settings for a build in a temporary folder: a copy of a catalog (the sample by default) and its own dist/,
 * reading data files from the sample data folder.
 */
export async function makeTestConfig(options: { catalog?: string; copyCatalog?: boolean; baseUrl?: string } = {}): Promise<Config & { root: string }> {
  const root = await makeTempDir();
  const source = options.catalog ?? join(ROOT, 'catalog-data');
  const catalogDir = options.copyCatalog === false ? source : join(root, 'catalog');
  if (options.copyCatalog !== false) {
    const data = join(source, 'data');
    await cp(source, catalogDir, { recursive: true, filter: (path) => path !== data && !path.startsWith(`${data}/`) });
  }
  const config = loadConfig({}, {
    catalogDir,
    dataDir: join(ROOT, 'catalog-data', 'data'),
    distDir: join(root, 'dist'),
    cacheDir: join(root, 'cache'),
    baseUrl: options.baseUrl ?? 'https://catalog.example.org',
    buildConcurrency: 2,
  });
  return { ...config, root };
}

/** Every file under a folder with its bytes, keyed by relative path. */
export async function snapshotTree(dir: string): Promise<Map<string, { bytes: Buffer; ino: number; mtimeMs: number }>> {
  const files = new Map<string, { bytes: Buffer; ino: number; mtimeMs: number }>();
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const info = await stat(path);
    files.set(relative(dir, path), { bytes: await readFile(path), ino: info.ino, mtimeMs: info.mtimeMs });
  }
  return files;
}
