import { rm } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import { buildCatalog } from '../../generator/build.ts';
import { makeTestConfig } from '../helpers/catalog.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Settings of the sample catalog built once for the whole run. */
    sampleConfig: string;
  }
}

/** Builds the sample catalog once into a temporary folder; suites read it through `inject('sampleConfig')`. */
export default async function setup(project: TestProject) {
  const config = await makeTestConfig();
  await buildCatalog({ config });
  project.provide('sampleConfig', JSON.stringify(config));
  return async () => {
    await rm(config.root, { recursive: true, force: true });
  };
}
