/**
 * The file page's script. It reads the first rows of the file's GeoParquet source (parquet-wasm over HTTP range
 * requests, no server) in a worker, at once, and shows them as a table; the map is the build's picture of the file
 * until a person asks for the live map, which then draws every feature from the file's PMTiles archive when it has
 * one, else the rows read. Markup: `src/components/FilePreview.astro`. The worker holds parquet-wasm and
 * apache-arrow, and maplibre-gl and pmtiles load by dynamic import on that request, so the page's main thread
 * carries none of them while a person reads.
 */
import '../../styles/preview.css';
import type { FeatureCollection } from 'geojson';
import type { Bounds, MapView } from '../map/create-map.ts';
import type { PreviewAnswer, PreviewRequest } from '../preview/preview-messages.ts';
import { renderPreviewTable } from '../preview/render-table.ts';

/** Rows the preview reads and shows. */
const PREVIEW_ROWS = 100;
/** Performance mark set once the rows are in the page; the preview bench times navigation to it. */
const ROWS_MARK = 'geoshelf:preview-rows';
/** Performance mark set once the map has drawn the file's PMTiles archive; the PMTiles bench times navigation to it. */
const ARCHIVE_MARK = 'geoshelf:archive-drawn';

const section = document.querySelector<HTMLElement>('[data-preview]');
if (section) startFilePage(section);

function startFilePage(section: HTMLElement): void {
  const url = section.dataset.url;
  // The rows need nothing of the map: they are read first, off the main thread.
  const rows = url ? showPreview(section, url) : Promise.resolve(null);
  const container = section.querySelector<HTMLElement>('.preview-map');
  if (container) armMap(container, rows);
}

/**
 * The live map starts when a person asks for it (the button over the picture, or a click on the picture);
 * pointing at it or focusing the button fetches maplibre-gl beforehand. Making a WebGL map holds the main thread
 * for seconds on a phone-class CPU (Lighthouse counted 13.5 s of blocking time on this page when it started by
 * itself), which reading the page does not need.
 */
function armMap(container: HTMLElement, rows: Promise<FeatureCollection | null>): void {
  const button = container.querySelector<HTMLButtonElement>('[data-map-start]');
  // Markup without the build's picture (the benches' pages) has nothing to show meanwhile: its map starts once
  // the rows are in.
  if (!button) {
    void rows.then(() => startMap(container, rows));
    return;
  }
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    void startMap(container, rows);
  };
  const prefetch = () => void import('../map/load-maplibre.ts').then(({ loadMapLibre }) => loadMapLibre()).catch(() => undefined);
  button.hidden = false;
  button.addEventListener('click', start);
  container.querySelector('img')?.addEventListener('click', start);
  container.addEventListener('pointerenter', prefetch, { once: true });
  button.addEventListener('focus', prefetch, { once: true });
}

async function startMap(container: HTMLElement, rows: Promise<FeatureCollection | null>): Promise<void> {
  container.dataset.state = 'loading';
  const view = await openMap(container, parseBounds(container.dataset.bounds));
  if (!view) return;
  const tilesUrl = container.dataset.tilesUrl;
  if (tilesUrl) {
    await showArchive(view, container, tilesUrl);
    return;
  }
  const features = await rows;
  if (features) view.showFeatures(features, { frame: true });
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

// Reads the rows in the preview worker and shows them, keeping the status line current; resolves with their
// geometries for the map, or null when there is nothing to draw or the read failed (the status line then says why).
async function showPreview(section: HTMLElement, url: string): Promise<FeatureCollection | null> {
  const status = section.querySelector<HTMLElement>('.preview-status');
  const tableContainer = section.querySelector<HTMLElement>('.preview-table');
  if (!status || !tableContainer) return null;
  const rowCount = Number(section.dataset.rowCount ?? NaN);
  status.textContent = rowCount <= PREVIEW_ROWS ? `Reading all ${rowCount} rows…` : `Reading the first ${PREVIEW_ROWS} rows…`;
  section.dataset.state = 'loading';
  section.setAttribute('aria-busy', 'true');
  try {
    const answer = await readInWorker({
      url: new URL(url, location.href).href,
      rows: PREVIEW_ROWS,
      geometryColumn: section.dataset.geometryColumn ?? null,
      version: section.dataset.version ?? null,
    });
    if (!answer.ok) {
      status.textContent = answer.status;
      section.dataset.state = 'error';
      return null;
    }
    renderPreviewTable(tableContainer, answer.table);
    performance.mark(ROWS_MARK);
    status.textContent = answer.status;
    section.dataset.state = 'ready';
    return answer.features;
  } finally {
    section.removeAttribute('aria-busy');
  }
}

/** Asks a fresh preview worker for the rows; a worker that cannot start or crashes answers as a failed read. */
function readInWorker(request: PreviewRequest): Promise<PreviewAnswer> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(new URL('../preview/preview-worker.ts', import.meta.url), { type: 'module', name: 'geoshelf preview' });
    } catch (error) {
      resolve({ ok: false, status: `The preview could not start its reader: ${String(error).slice(0, 160)}` });
      return;
    }
    const finish = (answer: PreviewAnswer) => {
      worker.terminate();
      resolve(answer);
    };
    worker.addEventListener('message', (event: MessageEvent<PreviewAnswer>) => finish(event.data));
    worker.addEventListener('error', (event) => finish({ ok: false, status: `The preview's reader failed: ${event.message || 'it could not be loaded'}.` }));
    worker.postMessage(request);
  });
}

// The map is a picture beside the table: if it cannot start (no WebGL, say), the rows still show, and so does
// the build's picture of the file.
async function openMap(container: HTMLElement, bounds: Bounds | null): Promise<MapView | null> {
  const picture = [...container.children];
  try {
    const { createMapView } = await import('../map/create-map.ts');
    const view = await createMapView(container, { label: 'Map of the file’s extent and its features', bounds });
    // The picture lies over the map until the map has drawn its first frame.
    picture.forEach((element) => element.remove());
    if (bounds) view.showBounds(bounds);
    container.dataset.state = 'ready';
    return view;
  } catch (error) {
    console.error('the preview map could not start', error);
    container.dataset.state = 'error';
    const note = document.createElement('p');
    note.className = 'preview-map-error';
    note.textContent = 'The live map could not be drawn in this browser; the picture shows the file.';
    container.querySelector('[data-map-start]')?.remove();
    container.append(note);
    return null;
  }
}

function parseBounds(text: string | undefined): Bounds | null {
  const values = (text ?? '').split(',').map(Number);
  return values.length === 4 && values.every(Number.isFinite) ? (values as Bounds) : null;
}
