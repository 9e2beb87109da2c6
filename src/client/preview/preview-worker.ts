/**
 * The file page's reader, in a dedicated worker: parquet-wasm reads the first rows over HTTP range requests,
 * apache-arrow decodes them, and the cells are formatted here, so the page's main thread only builds the table.
 * In the page, wasm instantiation, the read and the decoding held the main thread for seconds on a busy phone-class
 * CPU (Lighthouse counted them as blocking time). Protocol: one {@link PreviewRequest} in, one {@link PreviewAnswer} out.
 */
import { describePreview } from './describe-preview.ts';
import { decodePreviewGeometries } from './preview-geometries.ts';
import { describePreviewError } from './preview-error.ts';
import { readPreview } from './read-preview.ts';
import { tabulatePreview } from './tabulate-preview.ts';
import type { PreviewAnswer, PreviewRequest } from './preview-messages.ts';

addEventListener('message', (event: MessageEvent<PreviewRequest>) => {
  void answer(event.data).then((reply) => postMessage(reply));
});

async function answer(request: PreviewRequest): Promise<PreviewAnswer> {
  try {
    const preview = await readPreview(request.url, { rows: request.rows, geometryColumn: request.geometryColumn });
    const decoded = preview.geometryColumn ? decodePreviewGeometries(preview.table, preview.geometryColumn) : null;
    const version = request.version ? ` of version ${request.version}` : '';
    const table = tabulatePreview(preview.table, {
      caption: `The first ${preview.table.numRows} rows${version}`,
      geometryColumn: preview.geometryColumn,
      geometries: decoded?.geometries ?? null,
    });
    return { ok: true, table, status: describePreview(preview, decoded), features: decoded?.features ?? null };
  } catch (error) {
    return { ok: false, status: describePreviewError(error) };
  }
}
