/**
 * A thread that makes PMTiles twins (generator/tiles/twin-pool.ts): each message names one twin, each answer
 * says what was written or why not. The thread has its own DuckDB instance of one thread and a bounded memory
 * (twinInstanceOptions), so two twins made at once use the two cores without their readers contending.
 */
import { parentPort } from 'node:worker_threads';
import { DuckDBInstance } from '@duckdb/node-api';
import { NoGeometryError, writePmTilesTwin } from './pmtiles-twin.ts';
import { twinInstanceOptions } from './twin-stage.ts';
import type { TwinJob, TwinOutcome, TwinProgress } from './twin-pool.ts';

const port = parentPort!;
let instance: Promise<DuckDBInstance> | undefined;

port.on('message', async (job: TwinJob) => {
  let outcome: TwinOutcome;
  try {
    instance ??= DuckDBInstance.create(':memory:', twinInstanceOptions());
    // How far the twin is goes back as it moves, so that a large file's twin shows its progress.
    const facts = await writePmTilesTwin({ instance: await instance, ...job, progress: (fraction) => port.postMessage({ fraction } satisfies TwinProgress) });
    outcome = { ok: true, facts };
  } catch (error) {
    outcome = { ok: false, message: (error as Error).message, noGeometry: error instanceof NoGeometryError };
  }
  port.postMessage(outcome);
});
