import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildCatalog } from '../../generator/build.ts';
import { makeTestConfig } from '../helpers/catalog.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Settings of the sample catalog built once for the whole run. */
    sampleConfig: string;
  }
}

/**
 * Gives the run a temporary folder of its own, which every test file's process inherits as TMPDIR and which is
 * removed when the run ends, so that no test's folders, builds or stores outlive the run whether or not the test
 * cleans up; `GEOSHELF_SHARED_TMPDIR` keeps the system's, for what is kept between runs (the unpacked
 * Chromium). Then builds the sample catalog once into it; suites read it through `inject('sampleConfig')`.
 */
export default async function setup(project: TestProject) {
  const shared = tmpdir();
  const run = await mkdtemp(join(shared, 'geoshelf-test-run-'));
  const before = { TMPDIR: process.env.TMPDIR, GEOSHELF_SHARED_TMPDIR: process.env.GEOSHELF_SHARED_TMPDIR };
  process.env.GEOSHELF_SHARED_TMPDIR = shared;
  process.env.TMPDIR = run;
  const config = await makeTestConfig();
  await buildCatalog({ config });
  project.provide('sampleConfig', JSON.stringify(config));
  return async () => {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await rm(run, { recursive: true, force: true });
  };
}
