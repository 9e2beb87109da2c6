import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTestConfig, ROOT } from './helpers/catalog.ts';

const NODE = process.execPath;

function environment(config: Awaited<ReturnType<typeof makeTestConfig>>, extra: Record<string, string> = {}) {
  return {
    ...process.env,
    GEOSHELF_CATALOG_DIR: config.catalogDir,
    GEOSHELF_DATA_DIR: config.dataDir,
    GEOSHELF_DIST_DIR: config.distDir,
    GEOSHELF_CACHE_DIR: config.cacheDir,
    CI: 'true',
    ...extra,
  };
}

describe('npm run build', () => {
  it('exits non-zero and prints every problem with file and line when records are broken', async () => {
    const config = await makeTestConfig({ catalog: join(ROOT, 'tests/fixtures/broken-catalog') });
    const result = spawnSync(NODE, ['generator/cli.ts'], { cwd: ROOT, env: environment(config), encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('✖ The build found 5 problems; dist/ was left as it was.');
    for (const place of ['collections/broken.yaml:2', 'collections/world.yaml:1', 'datasets/dangling.yaml:2', 'datasets/no-slug.yaml:1', 'formats.yaml:6']) {
      expect(result.stderr).toContain(place);
    }
    expect(result.stderr).toContain('DanglingReference: A record refers to something that does not exist.');
  });

  it('says that nothing changed when run again on the same records, and writes nothing', async () => {
    const config = await makeTestConfig();
    const build = () => spawnSync(NODE, ['generator/cli.ts'], { cwd: ROOT, env: environment(config), encoding: 'utf8' });
    const first = build();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/✔ \d+ documents in .* \(full: \d+ written, 0 removed/);
    const again = build();
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/✔ \d+ documents in .* \(nothing changed since the last build; PMTiles twins: 0 made, \d+ current\)/);
  });

  it('names a wrong setting instead of building', async () => {
    const config = await makeTestConfig();
    const result = spawnSync(NODE, ['generator/cli.ts'], { cwd: ROOT, env: environment(config, { GEOSHELF_LEDGER: 'maybe' }), encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('settings: GEOSHELF_LEDGER:');
  });
});

describe('npm start', () => {
  it('builds, then serves the web app, the API and the data files on one port, and prints the URL', async () => {
    const config = await makeTestConfig();
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(NODE, ['server/main.ts'], { cwd: ROOT, env: environment(config, { PORT: String(port), HOST: '127.0.0.1', GEOSHELF_BASE_URL: '' }) });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let output = '';
        child.stdout.on('data', (chunk) => {
          output += chunk;
          const match = /geoshelf is serving (\S+)/.exec(output);
          if (match) resolve(match[1]!);
        });
        child.on('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
      });
      expect(line).toBe(`http://127.0.0.1:${port}/`);
      const home = await fetch(line);
      expect(home.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await home.text()).toContain('<h1>Geospatial datasets</h1>');
      const api = await (await fetch(`${line}api`)).json();
      expect(api.links.collections).toBe(`http://127.0.0.1:${port}/api/collections`);
      const file = await (await fetch(`http://127.0.0.1:${port}/api/collections/geonames/datasets/megacities/files/megacities`)).json();
      const download = await fetch(file.file.formats[0].sources[0].url);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).subarray(0, 4).toString()).toBe('PAR1');
    } finally {
      child.kill();
    }
  });
});

describe('progress', () => {
  it('reports files done of total with the time left, and always the last one', async () => {
    const { createProgress } = await import('../generator/enrich/progress.ts');
    const reports: [number, number, number | undefined][] = [];
    const advance = createProgress('reading data files', 4, (_label, done, total, secondsLeft) => reports.push([done, total, secondsLeft]), 0);
    for (let done = 1; done <= 4; done++) {
      const until = performance.now() + 5;
      while (performance.now() < until);
      advance(done);
    }
    expect(reports.map(([done, total]) => `${done}/${total}`)).toEqual(['1/4', '2/4', '3/4', '4/4']);
    expect(reports[0]![2]).toBeGreaterThan(0);
    expect(reports[3]![2]).toBeUndefined();
  });

  it('stays quiet when CI is set', async () => {
    const config = await makeTestConfig();
    const result = spawnSync(NODE, ['generator/cli.ts'], { cwd: ROOT, env: environment(config), encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).not.toContain('\r');
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
  });
});
