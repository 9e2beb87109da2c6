import { readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { rolldown } from 'rolldown';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/** Every TypeScript module of a folder, recursively. */
function modulesOf(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('the shared code a browser can import', () => {
  it('bundles every module of schemas/ and core/ for the browser, with no Node module, Buffer or process', async () => {
    const entries = [...modulesOf('schemas'), ...modulesOf('core')];
    const nodeImports: string[] = [];
    const bundle = await rolldown({
      input: entries,
      platform: 'browser',
      logLevel: 'silent',
      plugins: [{
        name: 'refuse-node',
        resolveId(source, importer) {
          if (NODE_BUILTINS.has(source)) {
            nodeImports.push(`${relative(ROOT, importer ?? '?')} imports ${source}`);
            return { id: source, external: true };
          }
          return null;
        },
      }],
    });
    const { output } = await bundle.generate({ format: 'esm' });
    await bundle.close();
    expect(nodeImports).toEqual([]);
    const code = output.map((chunk) => ('code' in chunk ? chunk.code : '')).join('\n');
    expect(code).not.toMatch(/\bBuffer\.(from|alloc|concat|byteLength)\b/);
    expect(code).not.toMatch(/\bprocess\.(env|cwd|platform|argv)\b/);
    expect(entries.length).toBeGreaterThan(40);
  });
});
