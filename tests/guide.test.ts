import { spawn } from 'node:child_process';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { findFreePort } from './helpers/web-app.ts';

/** The shell lines of the README's guide "Cataloging your own files", between its markers. */
async function guideLines(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- guide:start[^>]*-->\s*```sh\n([\s\S]*?)```\s*<!-- guide:end -->/.exec(readme);
  expect(block, 'README has the guide between its markers').not.toBeNull();
  return block![1]!.trim().split('\n');
}

describe('the README guide "Cataloging your own files"', () => {
  it('goes from a folder of files to a served catalog with its lines as they are written', async () => {
    const lines = await guideLines();
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(lines.at(-1)).toBe('npx geoshelf start');
    // The steward's home, with their files in ~/survey-data; settings the guide leaves to their defaults point
    // into the temporary home too, so the run touches nothing of the repository's.
    const home = await makeTempDir();
    await mkdir(join(home, 'survey-data'));
    await copyFile(join(ROOT, 'catalog-data/data/geonames/cities/3.1.0/cities-100000.parquet'), join(home, 'survey-data/towns.parquet'));
    await copyFile(join(ROOT, 'catalog-data/data/natural-earth/countries/2.0.2/countries-110m.geojson'), join(home, 'survey-data/countries.geojson'));
    const port = await findFreePort();
    const env = {
      ...process.env, HOME: home, PORT: String(port), HOST: '127.0.0.1', GEOSHELF_BASE_URL: `http://127.0.0.1:${port}`,
      GEOSHELF_DIST_DIR: join(home, 'dist'), GEOSHELF_CACHE_DIR: join(home, 'cache'), GEOSHELF_LEDGER: 'update', CI: '1',
    };
    const script = `set -e\n${lines.join('\n')}\n`;
    const shell = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const output: string[] = [];
    shell.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    try {
      const serving = await new Promise<string>((resolve, reject) => {
        createInterface({ input: shell.stdout }).on('line', (line) => {
          output.push(line);
          if (line.startsWith('geoshelf is serving')) resolve(line);
        });
        shell.on('exit', (code) => reject(new Error(`the guide stopped with ${code} before serving:\n${output.join('\n')}`)));
      });
      expect(serving).toContain(`127.0.0.1:${port}`);
      // check printed the columns still to describe, and its verdict.
      expect(output.join('\n')).toMatch(/columns of 2 files have no description/);
      const collection = await (await fetch(`http://127.0.0.1:${port}/api/collections/survey`)).json() as { collection: { description: string }; datasets: { slug: string }[] };
      expect(collection.collection.description).toBe('Field surveys of 2026.');
      expect(collection.datasets.map((dataset) => dataset.slug).sort()).toEqual(['countries', 'towns']);
      const page = await fetch(`http://127.0.0.1:${port}/collections/survey/datasets/towns/`);
      expect(page.status).toBe(200);
    } finally {
      process.kill(-shell.pid!, 'SIGTERM');
    }
  });
});
