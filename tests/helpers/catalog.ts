import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
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

/**
 * A small catalog in a temporary folder with a data folder of its own: the sample's storage locations, a
 * collection `maps`, and the given record files (`formats.yaml`, `datasets/*.yaml`, …); `data` copies files
 * into the data folder (its path there → the file to copy).
 */
export async function makeTempCatalog(records: Record<string, string>, data: Record<string, string> = {}): Promise<{ config: Config; dataDir: string }> {
  const root = await makeTempDir();
  const catalogDir = join(root, 'catalog');
  const dataDir = join(root, 'data');
  const files = { 'storage-locations.yaml': await readFile(join(ROOT, 'catalog-data/storage-locations.yaml'), 'utf8'), 'collections/maps.yaml': 'slug: maps\nname: Maps\n', ...records };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(catalogDir, path)), { recursive: true });
    await writeFile(join(catalogDir, path), text);
  }
  await mkdir(dataDir, { recursive: true });
  for (const [path, from] of Object.entries(data)) {
    await mkdir(dirname(join(dataDir, path)), { recursive: true });
    await copyFile(from, join(dataDir, path));
  }
  const config = loadConfig({}, { catalogDir, dataDir, distDir: join(root, 'dist'), cacheDir: join(root, 'cache'), baseUrl: 'https://catalog.example.org', buildConcurrency: 2 });
  return { config, dataDir };
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
