/** The messages between the file page and its preview worker (preview-worker.ts). */
import type { FeatureCollection } from 'geojson';
import type { PreviewTableModel } from './render-table.ts';

/** What the page asks the worker to read. */
export interface PreviewRequest {
  /** Absolute URL of the GeoParquet file. */
  url: string;
  rows: number;
  /** The geometry column the data dictionary names, if any. */
  geometryColumn: string | null;
  /** The version shown, for the table's caption. */
  version: string | null;
}

/** The worker's one answer: the rows as text and their geometries, or why they could not be read. */
export type PreviewAnswer =
  | { ok: true; table: PreviewTableModel; status: string; features: FeatureCollection | null }
  | { ok: false; status: string };
