/**
 * The file page's script. It reads the first rows of the file's GeoParquet source in the browser
 * (parquet-wasm over HTTP range requests, no server), shows them as a table, and draws the file's extent on a
 * map, with every feature from the file's PMTiles archive when it has one, else the rows read. Markup:
 * `src/components/FilePreview.astro`. maplibre-gl (through createMapView), pmtiles, parquet-wasm and
 * apache-arrow are loaded by dynamic import, so the page's first load carries none of them.
 */
import '../../styles/preview.css';
import type { FeatureCollection } from 'geojson';
import { createMapView, type Bounds, type MapView } from '../map/create-map.ts';
import { compileParquetWasm } from '../preview/compile-parquet-wasm.ts';
import { describePreviewError } from '../preview/preview-error.ts';

/** Rows the preview reads and shows. */
const PREVIEW_ROWS = 100;
/** Performance mark set once the rows are in the page; the preview bench times navigation to it. */
const ROWS_MARK = 'geoshelf:preview-rows';
/** Performance mark set once the map has drawn the file's PMTiles archive; the PMTiles bench times navigation to it. */
const ARCHIVE_MARK = 'geoshelf:archive-drawn';
/**
 * Making the map (a WebGL context, its shaders, the basemap) holds the main thread for a few hundred
 * milliseconds, and started at once it held the rows back by as much: in headless Chromium, the cities-1000 and
 * countries-110m samples showed their rows after 325–1,015 ms with the map started first, 182–452 ms with
 * the rows first. So a map of the previewed rows starts once they are shown or the read has failed, or after
 * this long, whichever comes first. A map of the whole file from its PMTiles archive starts at once: waiting
 * for the rows put its first screen at 1.8 s for a 1M-point file (`npm run bench -- pmtiles`).
 */
const MAP_DELAY_MS = 1000;

const section = document.querySelector<HTMLElement>('[data-preview]');
if (section) void startFilePage(section);

async function startFilePage(section: HTMLElement): Promise<void> {
  const url = section.dataset.url;
  const mapContainer = section.querySelector<HTMLElement>('.preview-map');
  const tilesUrl = mapContainer?.dataset.tilesUrl;
  if (mapContainer && tilesUrl) {
    // A map of the whole file needs none of the rows: it goes first, and the rows are read once it is drawn.
    const view = await openMap(mapContainer, parseBounds(mapContainer.dataset.bounds));
    if (view) await showArchive(view, mapContainer, tilesUrl);
    if (url) await showPreview(section, url);
    return;
  }
  const preview = url ? showPreview(section, url) : Promise.resolve(null);
  if (!mapContainer) return;
  await Promise.race([preview, new Promise((resolve) => setTimeout(resolve, MAP_DELAY_MS))]);
  const view = await openMap(mapContainer, parseBounds(mapContainer.dataset.bounds));
  const features = await preview;
  if (view && features) view.showFeatures(features, { frame: true });
}

// Draws every feature from the file's PMTiles archive; the previewed rows are among them, so they are not drawn
// again. A failure leaves the extent on the map and says so.
async function showArchive(view: MapView, container: HTMLElement, url: string): Promise<void> {
  try {
    await view.showArchive(url);
    performance.mark(ARCHIVE_MARK);
    container.dataset.archive = 'drawn';
  } catch (error) {
    console.error('the PMTiles archive could not be drawn', error);
    container.dataset.archive = 'error';
  }
}

// Reads and shows the rows, keeping the status line current; resolves with their geometries for the map, or
// null when there is nothing to draw or the read failed (the status line then says why).
async function showPreview(section: HTMLElement, url: string): Promise<FeatureCollection | null> {
  const status = section.querySelector<HTMLElement>('.preview-status');
  const tableContainer = section.querySelector<HTMLElement>('.preview-table');
  if (!status || !tableContainer) return null;
  const absoluteUrl = new URL(url, location.href).href;
  const wasm = compileParquetWasm();
  // readPreview awaits it later; this keeps an early failure from being reported as unhandled meanwhile.
  wasm.catch(() => undefined);
  const rowCount = Number(section.dataset.rowCount ?? NaN);
  status.textContent = rowCount <= PREVIEW_ROWS ? `Reading all ${rowCount} rows…` : `Reading the first ${PREVIEW_ROWS} rows…`;
  section.dataset.state = 'loading';
  section.setAttribute('aria-busy', 'true');
  try {
    const [{ readPreview }, { decodePreviewGeometries }, { renderPreviewTable }, { describePreview }] = await Promise.all([
      import('../preview/read-preview.ts'),
      import('../preview/preview-geometries.ts'),
      import('../preview/render-table.ts'),
      import('../preview/describe-preview.ts'),
    ]);
    const preview = await readPreview(absoluteUrl, { rows: PREVIEW_ROWS, geometryColumn: section.dataset.geometryColumn, wasm });
    const decoded = preview.geometryColumn ? decodePreviewGeometries(preview.table, preview.geometryColumn) : null;
    const version = section.dataset.version ? ` of version ${section.dataset.version}` : '';
    renderPreviewTable(tableContainer, preview.table, {
      caption: `The first ${preview.table.numRows} rows${version}`,
      geometryColumn: preview.geometryColumn,
      geometries: decoded?.geometries ?? null,
    });
    performance.mark(ROWS_MARK);
    status.textContent = describePreview(preview, decoded);
    section.dataset.state = 'ready';
    return decoded?.features ?? null;
  } catch (error) {
    status.textContent = describePreviewError(error);
    section.dataset.state = 'error';
    return null;
  } finally {
    section.removeAttribute('aria-busy');
  }
}

// The map is a picture beside the table: if it cannot start (no WebGL, say), the rows still show.
async function openMap(container: HTMLElement, bounds: Bounds | null): Promise<MapView | null> {
  try {
    const view = await createMapView(container, { label: 'Map of the file’s extent and the previewed rows', bounds });
    if (bounds) view.showBounds(bounds);
    return view;
  } catch (error) {
    console.error('the preview map could not start', error);
    container.dataset.state = 'error';
    const note = document.createElement('p');
    note.textContent = 'The map could not be drawn in this browser.';
    container.replaceChildren(note);
    return null;
  }
}

function parseBounds(text: string | undefined): Bounds | null {
  const values = (text ?? '').split(',').map(Number);
  return values.length === 4 && values.every(Number.isFinite) ? (values as Bounds) : null;
}
