import type { FeatureFilter } from '../core/api/ogc/items.ts';
import type { StorageLocationModel } from '../core/model.ts';
import type { DownloadFormat } from '../core/api/download-formats.ts';
import type { QueryErrorBody } from './errors.ts';

/**
 * The messages between the API process and its workers (query/pool.ts, query/worker.ts): tasks, what each
 * returns, and the limits and sources they carry. A leaf: it takes types only from the two modules of query/
 * that import nothing (the error catalog and the download formats), so every other module can import it.
 */

/** Limits of one sandboxed query. */
export interface SandboxSettings {
  threads: number;
  memoryLimitMb: number;
  maxResponseBytes: number;
  tileMaxFeatures: number;
}

/** A source a query reads: its alias in the SQL and the local file behind it. Paths never leave the server. */
export interface ResolvedSource {
  alias: string;
  path: string;
  /**
   * The bytes of the file as the build read them: a prefix of its SHA-256, empty when the build could not read it.
   * A token keeps it, so a query is never answered from other data than it ran on (`checkSameData`).
   */
  version?: string;
  /**
   * For a source in object storage: where it is. `path` and `version` are filled once its local copy is ready
   * (`fetchRemoteSources`).
   */
  remote?: { location: StorageLocationModel; path: string };
}

/**
 * Where a query's time went, in milliseconds per named step, in the order the steps ran (query/steps.ts names
 * the steps and times them).
 */
export type Steps = Record<string, number>;

/** What every task carries: the SQL, its sources and the sandbox limits. */
interface TaskBase {
  sql: string;
  sources: ResolvedSource[];
  geometryColumn: string | undefined;
  settings: SandboxSettings;
  /**
   * Names the query whose run times predict this task's (a query id, or a hash of its SQL). Without it the
   * pool derives one from the SQL and sources, so repeats of one query share a history.
   */
  costKey?: string;
}

/** A tile address within a `tiles` batch (one zoom per batch). */
export interface TileCoordinate {
  x: number;
  y: number;
}

/** One read of a features task. */
export type FeatureRead =
  /** A page of `limit` features after (or, for prev links, before) a feature id; `count` adds numberMatched. */
  | { mode: 'page'; filter: FeatureFilter; after?: number; before?: number; limit: number; count: boolean }
  /** One feature by id. */
  | { mode: 'one'; id: number };

/** A task for a worker process. */
export type QueryTask =
  /** A page as JSON rows (query/page-rows.ts), or with `format: 'arrow'` as an Arrow IPC stream (query/arrow.ts). */
  | (TaskBase & { kind: 'page'; offset: number; limit: number; resultCrs: string | undefined; format?: 'arrow' })
  /** The whole result, at most `maxRows` rows, written as a file to `path` (query/export.ts). */
  | (TaskBase & { kind: 'export'; format: DownloadFormat; path: string; maxRows: number; resultCrs: string | undefined })
  /** The result's WGS84 extent (query/bounds.ts). */
  | (TaskBase & { kind: 'bounds' })
  /** One vector tile of the result (query/tiles.ts). */
  | (TaskBase & { kind: 'tile'; z: number; x: number; y: number })
  /**
   * OGC features of the one source (query/features.ts). `sql` is empty: the worker writes the SQL from `read`;
   * `crs` is the file's CRS, from which geometries are reprojected to CRS84.
   */
  | (TaskBase & { kind: 'features'; crs: string | null; read: FeatureRead });

/**
 * Tiles of one query at one zoom, coalesced by the pool from queued `tile` tasks so that one sandbox and one
 * scan serve them all. Only the pool makes these; the worker answers each tile with its own `tile` message.
 */
export type TileBatchTask = TaskBase & { kind: 'tiles'; z: number; tiles: TileCoordinate[] };

/** What a worker runs: a task, or a batch of tiles. */
export type WorkerTask = QueryTask | TileBatchTask;

/** A column of a page. */
export interface PageColumn {
  name: string;
  type: string;
  nullable: boolean;
}

/**
 * What a page task returns. The rows come as one JSON text in UTF-8, written in the worker while it sizes the page:
 * the API process splices the bytes into the response unparsed (query/page.ts). Measured on 1.7 MB of JSON: bytes
 * cross the IPC channel in 2 ms of the API process's event loop, a string in 35–60 ms, and a JSON.stringify of the
 * rows as objects, or a TextEncoder pass over a string, costs as much again.
 */
export interface PageValue extends PageFacts {
  columns: PageColumn[];
  /** The rows as a JSON array, UTF-8. */
  rowsJson: Uint8Array;
}

/** What an Arrow page task returns: the stream (schema and one record batch) and what the page needs besides. */
export interface ArrowPageValue extends PageFacts {
  ipc: Uint8Array;
}

/** What a page says of itself, in JSON or Arrow. */
export interface PageFacts {
  rowCount: number;
  hasMore: boolean;
  truncated: boolean;
  warnings: string[];
  bytesRead: number;
  geometryColumn: string | null;
}

/** What an export task returns. */
export interface ExportValue {
  rows: number;
  bytes: number;
  warnings: string[];
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

/**
 * What a features task returns. The features come as one JSON text in UTF-8, written in the worker (`{"type":
 * "Feature","id","geometry","properties"}` each): the API process splices the bytes into its document unparsed, so
 * a page of 10,000 features costs its event loop no decoding of objects and no JSON.stringify (see PageValue).
 */
export interface FeaturesValue {
  /** The features as a JSON array, in file order, UTF-8. */
  featuresJson: Uint8Array;
  /** Their ids (row numbers), in the same order. */
  ids: number[];
  /** More features follow in the direction read (after the last, or before the first for a `before` page). */
  hasMore: boolean;
  /** Features matching the filter, when asked for. */
  matched?: number;
}

/** A worker's answer to a task. `retryAfter` (seconds) comes with 503s: surfaces send it as Retry-After. */
export type TaskOutcome =
  /** `steps`: where the task's time went (query/steps.ts), from its wait for a worker to its answer's return. */
  | { ok: true; value: PageValue | BoundsValue | TileValue | FeaturesValue | ArrowPageValue | ExportValue; steps?: Steps }
  | { ok: false; error: QueryErrorBody; retryAfter?: number };

/** Messages from the API process to a worker. */
export type ToWorker = { type: 'run'; id: number; task: WorkerTask } | { type: 'interrupt'; id: number };

/**
 * Messages from a worker to the API process: `done` answers a task; a `tiles` batch is answered by one `tile`
 * message per tile instead (by its index in the batch), as each is ready, and ends with the last of them.
 * `ms` is the time the worker spent on that answer once its sandbox was open, for the pool's estimates; `steps`
 * is where the worker's time for a task went (its sandbox, its query, its rows).
 */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'done'; id: number; outcome: TaskOutcome; ms: number; steps?: Steps }
  | { type: 'tile'; id: number; index: number; outcome: TaskOutcome; ms: number };
