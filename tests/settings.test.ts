import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, SETTINGS } from '../runtime/config.ts';
import { InputError } from '../schemas/parse.ts';
import { ROOT } from './helpers/catalog.ts';

const readme = await readFile(join(ROOT, 'README.md'), 'utf8');

describe('settings', () => {
  it.each(Object.values(SETTINGS).map((setting) => [setting.env, setting.default]))('%s is documented in the README with its default', (env, fallback) => {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${env}\``));
    expect(row, `README settings table has no row for ${env}`).toBeDefined();
    expect(row).toContain(fallback === '' ? '(empty)' : `\`${fallback}\``);
  });

  it('default to serving the sample on localhost:3000 with links to itself', () => {
    const config = loadConfig({});
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.storageBaseUrl).toBe('http://localhost:3000/data');
    expect(config.distDir).toBe(join(process.cwd(), 'dist'));
  });

  it('name every variable that is wrong', () => {
    let thrown: unknown;
    try {
      loadConfig({ PORT: 'eighty', GEOSHELF_BASE_URL: 'catalog.example.org', GEOSHELF_LEDGER: 'sometimes' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as InputError).issues.map((issue) => issue.path)).toEqual(['PORT', 'GEOSHELF_BASE_URL', 'GEOSHELF_LEDGER']);
    expect((thrown as InputError).message).toContain('settings: GEOSHELF_BASE_URL: must be an absolute URL');
  });

  it('refuse a URL where a folder goes, saying how remote data is declared, rather than read it as a relative path', () => {
    let thrown: unknown;
    try {
      loadConfig({ GEOSHELF_DATA_DIR: 's3://bucket/data', GEOSHELF_DIST_DIR: 'https://cdn.example.org/site' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as InputError).issues.map((issue) => issue.path)).toEqual(['GEOSHELF_DATA_DIR', 'GEOSHELF_DIST_DIR']);
    expect((thrown as InputError).message).toContain('GEOSHELF_DATA_DIR: must be a folder on this machine, not a URL: declare data in object storage as a storage location');
    // A folder whose name merely holds a colon is a folder.
    expect(loadConfig({ GEOSHELF_DATA_DIR: 'data:2026' }).dataDir).toBe(join(process.cwd(), 'data:2026'));
  });

  it('use HOST and PORT for the address and the default links', () => {
    const config = loadConfig({ HOST: '0.0.0.0', PORT: '8080' });
    expect(config.host).toBe('0.0.0.0');
    expect(config.port).toBe(8080);
    expect(config.baseUrl).toBe('http://localhost:8080');
  });
});
