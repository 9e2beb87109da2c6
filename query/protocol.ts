import type { QueryErrorBody } from './errors.ts';
import type { SandboxSettings } from './sandbox.ts';
import type { ResolvedSource } from './sources.ts';

/** What every task carries: the SQL, its sources and the sandbox limits. */
interface TaskBase {
  sql: string;
  sources: ResolvedSource[];
  geometryColumn: string | undefined;
  settings: SandboxSettings;
}

/** A task for a worker process. */
export type QueryTask =
  | (TaskBase & { kind: 'page'; offset: number; limit: number; resultCrs: string | undefined })
  | (TaskBase & { kind: 'bounds' })
  | (TaskBase & { kind: 'tile'; z: number; x: number; y: number });

/** A column of a page. */
export interface PageColumn {
  name: string;
  type: string;
  nullable: boolean;
}

/** What a page task returns. */
export interface PageValue {
  columns: PageColumn[];
  rows: Record<string, unknown>[];
  hasMore: boolean;
  truncated: boolean;
  warnings: string[];
  bytesRead: number;
  geometryColumn: string | null;
}

/** What a bounds task returns. */
export interface BoundsValue {
  bounds: [number, number, number, number];
}

/** What a tile task returns. */
export interface TileValue {
  bytes: Uint8Array;
  features: number;
  truncated: boolean;
}

/** A worker's answer to a task. */
export type TaskOutcome =
  | { ok: true; value: PageValue | BoundsValue | TileValue }
  | { ok: false; error: QueryErrorBody };

/** Messages from the API process to a worker. */
export type ToWorker = { type: 'run'; id: number; task: QueryTask } | { type: 'interrupt'; id: number };

/** Messages from a worker to the API process. */
export type FromWorker = { type: 'ready' } | { type: 'done'; id: number; outcome: TaskOutcome };
