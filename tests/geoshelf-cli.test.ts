import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempCatalog, makeTempDir, makeTestConfig, ROOT } from './helpers/catalog.ts';
import { childEnvironment } from './helpers/processes.ts';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const COMMANDS = ['build', 'check', 'start', 'serve', 'fleet', 'cdn', 'publish'];

function geoshelf(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(process.execPath, ['cli/geoshelf.ts', ...args], { cwd: ROOT, env: { ...env, CI: 'true' }, encoding: 'utf8' });
}

describe('geoshelf --help', () => {
  it('lists every command with what it does, in plain text, and exits 0', () => {
    const result = geoshelf(['--help']);
    expect(result.status).toBe(0);
    for (const command of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^ {2}${command} .* {2,}\\w`, 'm'));
    expect(result.stdout).toMatch(/^Exit codes: 0 done, 1 the command failed .*, 2 a wrong command line\.$/m);
    expect(result.stdout).not.toContain('\x1b');
  });

  it('describes the options of build and exits 0', () => {
    const result = geoshelf(['build', '--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: geoshelf build \[options\]$/m);
    expect(result.stdout).toMatch(/^ {2}--full {2,}ignore the previous tree and every cache, and write every file$/m);
    expect(result.stdout).toMatch(/^ {2}--shallow {2,}read only the footers of files in object storage/m);
  });

  it.each([
    ['generator/cli.ts', 'build'],
    ['server/main.ts', 'start'],
    ['deploy/publish.ts', 'publish'],
    ['scripts/fleet.ts', 'fleet'],
    ['deploy/cdn.ts', 'cdn'],
  ])('node %s --help answers with the help of geoshelf %s', (script, command) => {
    const result = spawnSync(process.execPath, [script, '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: geoshelf ${command} `, 'm'));
  });
});

describe('geoshelf --version', () => {
  it('prints the version of package.json', () => {
    const result = geoshelf(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(VERSION);
  });
});

describe('a wrong command line exits 2 and says what is wrong', () => {
  it.each([
    ['a mistyped command', ['biuld'], [/^error: unknown command 'biuld'$/m, /^\(Did you mean build\?\)$/m]],
    ['a mistyped option', ['build', '--fulll'], [/^error: unknown option '--fulll'$/m, /^\(Did you mean --full\?\)$/m]],
    ['--delete without --data', ['publish', '--delete', 's3://x'], [/^error: --delete goes with --data/m]],
    ['--invalidations with --data', ['publish', '--data', '--invalidations', 'purge.json', 's3://x'], [/^error: --invalidations goes with the site publish/m]],
    ['a concurrency out of range', ['publish', 's3://x', '--concurrency', '65'], [/'--concurrency <n>' argument '65' is invalid\. It must be a whole number from 1 to 64\./]],
    ['a publish without a target', ['publish'], [/^error: missing required argument 'target'$/m]],
    ['fleet ports past 65535', ['fleet', '--port', '65535'], [/^error: --port must leave room for the replicas' ports/m]],
  ])('%s', (_name, args, messages) => {
    const result = geoshelf(args);
    expect(result.status).toBe(2);
    for (const message of messages) expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/--help lists its options\)$|--help for the commands and their options\)$/m);
    expect(result.stdout).toBe('');
  });

  it('through the npm script too: npm passes what follows -- to geoshelf', () => {
    const result = spawnSync('npm', ['run', '--silent', 'publish', '--', '--delete', 's3://x'], { cwd: ROOT, env: { ...process.env, CI: 'true' }, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^error: --delete goes with --data/m);
  });
});

describe('geoshelf check', () => {
  it('prints every problem with its file and line, exits 1 and creates no dist/', async () => {
    const config = await makeTestConfig({ catalog: join(ROOT, 'tests/fixtures/broken-catalog') });
    const result = geoshelf(['check'], childEnvironment(config));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('✖ The check found 5 problems.');
    for (const place of ['collections/broken.yaml:2', 'collections/world.yaml:1', 'datasets/dangling.yaml:2', 'datasets/no-slug.yaml:1', 'formats.yaml:6']) {
      expect(result.stderr).toContain(place);
    }
    expect(result.stderr).toContain('DanglingReference: A record refers to something that does not exist.');
    expect(existsSync(config.distDir)).toBe(false);
  });

  it('passes the sample catalog with exit code 0, without building it', async () => {
    const config = await makeTestConfig();
    const result = geoshelf(['check'], childEnvironment(config));
    expect(result.stderr).not.toContain('✖');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`✔ no problems in ${config.catalogDir}`);
    expect(existsSync(config.distDir)).toBe(false);
  }, 120_000);
});

describe('geoshelf check warnings', () => {
  it('prints warnings of one kind on one line with their count, and others as they are', async () => {
    // Three shapefiles without their .prj: the same warning of three files.
    const megacities = join(ROOT, 'catalog-data/data/geonames/megacities/3.1.0/megacities');
    const data: Record<string, string> = {};
    const files: string[] = [];
    for (const name of ['east', 'north', 'south', 'west']) {
      for (const part of ['shp', 'shx', 'dbf']) data[`${name}.${part}`] = `${megacities}.${part}`;
      files.push(`  - slug: ${name}`, `    name: ${name}`, `    columns: { city_id: Id, name: Name, population: People, country: Country, feature_co: Code, admin_code: Admin, alt_countr: Other countries, municipali: Municipality }`,
        '    formats:', '      - format: shapefile', '        sources:', '          - version: 1', `            path: ${name}.shp`);
    }
    const { config } = await makeTempCatalog({
      'formats.yaml': '- slug: shapefile\n  format_type: shapefile\n  name: Shapefile\n',
      'datasets/towns.yaml': ['slug: towns', 'collection: maps', 'name: Towns', 'files:', ...files, ''].join('\n'),
    }, data);
    const result = geoshelf(['check'], childEnvironment(config));
    expect(result.status).toBe(0);
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith('⚠'));
    const noCrs = warnings.filter((line) => line.includes('names no CRS'));
    expect(noCrs).toEqual(['⚠ it names no CRS (a shapefile without its .prj?), so its coordinates are taken as longitude/latitude (4 files: east.shp, north.shp, south.shp and 1 more)']);
  }, 120_000);
});

describe('geoshelf serve', () => {
  it('exits 1 and says so when there is no build to serve', async () => {
    const empty = await makeTempDir();
    const result = geoshelf(['serve'], { ...process.env, GEOSHELF_DIST_DIR: join(empty, 'dist') });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`✖ ${join(empty, 'dist')} holds no build`);
  });
});
