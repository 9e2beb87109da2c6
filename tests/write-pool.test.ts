import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createWriter, type WriteJob } from '../generator/emit/write-jobs.ts';
import { WritePool } from '../generator/emit/write-pool.ts';
import { COMPRESSION } from '../generator/build.ts';
import { makeTempDir } from './helpers/catalog.ts';

let folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  folders = [];
});
const folder = async () => {
  const made = await makeTempDir('geoshelf-write-pool-');
  folders.push(made);
  return made;
};

/** A JSON body of about `bytes` bytes that differs by `seed`. */
const body = (seed: number, bytes = 4000) => new TextEncoder().encode(JSON.stringify({ seed, text: `row ${seed} `.repeat(Math.ceil(bytes / 8)) }));

/** Reads a written file and, if it has them, checks its siblings decode to it; returns their sizes. */
async function readWritten(path: string): Promise<{ bytes: Buffer; br?: number; gz?: number }> {
  const bytes = await readFile(path);
  const br = await readFile(`${path}.br`).catch(() => undefined);
  const gz = await readFile(`${path}.gz`).catch(() => undefined);
  if (br) expect(brotliDecompressSync(br).equals(bytes), path).toBe(true);
  if (gz) expect(gunzipSync(gz).equals(bytes), path).toBe(true);
  return { bytes, ...(br ? { br: br.length } : {}), ...(gz ? { gz: gz.length } : {}) };
}

describe('the tree writer', () => {
  it('writes a body at every path that shares it, with siblings only when asked, and says their sizes', async () => {
    const root = await folder();
    const write = createWriter();
    const shared: WriteJob = { body: body(1), paths: [join(root, 'a', 'one.json'), join(root, 'b', 'c', 'two.json')], compress: true };
    const sizes = write(shared, COMPRESSION);
    for (const path of shared.paths) {
      const written = await readWritten(path);
      expect(written.bytes.equals(Buffer.from(shared.body))).toBe(true);
      expect({ br: written.br, gz: written.gz }).toEqual(sizes);
    }
    const plain: WriteJob = { body: body(2, 100), paths: [join(root, 'a', 'small.json')], compress: false };
    expect(write(plain, COMPRESSION)).toBeNull();
    expect(await readWritten(plain.paths[0]!)).toEqual({ bytes: Buffer.from(plain.body) });
  });

  it('writes batches on its threads as the main thread would, and returns each job\'s sizes in order', async () => {
    const root = await folder();
    const jobs: WriteJob[] = Array.from({ length: 400 }, (_, index) => ({ body: body(index), paths: [join(root, `c${index % 7}`, `d${index}`, 'index.json')], compress: index % 5 !== 0 }));
    const pool = new WritePool({ threads: 2, ...COMPRESSION });
    let batches;
    try {
      batches = pool.writeInBatches(jobs);
      expect(batches.length).toBeGreaterThan(1);
      for (const batch of batches) {
        const sizes = await batch.sizes;
        expect(sizes).toHaveLength(batch.jobs.length);
        for (const [index, job] of batch.jobs.entries()) {
          const written = await readWritten(job.paths[0]!);
          expect(written.bytes.equals(Buffer.from(job.body))).toBe(true);
          expect(sizes[index]).toEqual(job.compress ? { br: written.br, gz: written.gz } : null);
        }
      }
    } finally {
      await pool.close();
    }
  });

  it('fails a batch with the error code the file system gave a thread, so a full disk is still told apart', async () => {
    const root = await folder();
    // A file where a folder must go: the thread's mkdir fails with ENOTDIR (or EEXIST), as ENOSPC would fail it.
    await writeFile(join(root, 'blocked'), 'a file');
    const pool = new WritePool({ threads: 2, ...COMPRESSION });
    try {
      const [batch] = pool.writeInBatches([{ body: body(1), paths: [join(root, 'blocked', 'x', 'index.json')], compress: true }]);
      const error = await batch!.sizes.then(() => undefined, (failure: unknown) => failure as NodeJS.ErrnoException);
      expect(error).toBeInstanceOf(Error);
      expect(['ENOTDIR', 'EEXIST']).toContain(error!.code);
      // The pool goes on with other batches after a failed one.
      const [next] = pool.writeInBatches([{ body: body(2), paths: [join(root, 'ok', 'index.json')], compress: false }]);
      expect(await next!.sizes).toEqual([null]);
    } finally {
      await pool.close();
    }
  });
});
