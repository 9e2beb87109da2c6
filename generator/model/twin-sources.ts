/** The PMTiles twin sources the model gives each version of a file's GeoParquet data (generator/tiles/twins.ts makes them). */
import type { FileModel } from '../../core/model.ts';
import { compareVersionsNewestFirst } from '../../core/versions.ts';
import type { LocalDataFile, RemoteDataFile, ResolveContext } from './build-model.ts';
import { encodePath } from './source-paths.ts';

/** Description of every PMTiles twin the build makes. */
const TWIN_DESCRIPTION = 'Vector tiles of the whole GeoParquet file of this version, for maps on static hosting with no query service: ' +
  'made by the build from the GeoParquet file and made again when it changes. Zooms from 0 to one chosen from the data; where a ' +
  'tile would pass 500 KB, features are left out densest first, and the archive\'s metadata (geoshelf.dropped) counts them by zoom.';

/**
 * Gives each version of the file's GeoParquet data a PMTiles source of the same version beside it
 * (`x.parquet` → `x.pmtiles`). In the local data folder the build makes it (generator/tiles/twins.ts); in object
 * storage the build keeps it when the archive there is current (generator/enrich/enrich-remote.ts). It refers to
 * the GeoParquet source. Only when the catalog has a format of type `pmtiles` (the twins' format)
 * and the file lists no PMTiles source of that version itself. Ids come from the ledger like any source's.
 */
export function addTwins(file: FileModel, key: string, dataFiles: Map<number, LocalDataFile | RemoteDataFile>, context: ResolveContext): void {
  const { format, geoparquet } = twinFormats(context.formats);
  if (!format) return;
  let twins = file.formats.find((link) => link.format_id === format.id);
  const listed = new Set(twins?.sources.map((source) => source.version));
  for (const link of file.formats.filter((candidate) => geoparquet.has(candidate.format_id))) {
    for (const source of link.sources) {
      const data = dataFiles.get(source.id);
      if (!data || listed.has(source.version)) continue;
      if (!twins) {
        const { id, created_at } = context.ids.assign('file_format', `${key}/${format.slug}`);
        twins = { id, format_id: format.id, file_id: file.id, dataset_id: file.dataset_id, created_at, updated_at: file.updated_at, sources: [] };
        file.formats.push(twins);
      }
      const path = `${data.path.replace(/\.parquet$/i, '')}.pmtiles`;
      const { id } = context.ids.assign('source', `${key}/${format.slug}@${source.version}`);
      const base = source.url?.slice(0, source.url.length - encodePath(data.path).length) ?? '';
      twins.sources.push({
        id, file_format_id: twins.id, storage_location_id: source.storage_location_id, version: source.version, source_type: 'file',
        location: { type: 'file', version: source.version, path }, url: `${base}${encodePath(path)}`, glob_pattern: null,
        // A twin is a rendering of its GeoParquet source, made again whenever that changes: it takes the source's
        // dates, so adding twins to a catalog does not make every version look published today (STAC datetime).
        references_source_id: source.id, created_at: source.created_at, updated_at: source.updated_at,
        metadata: { version: source.version, description: TWIN_DESCRIPTION, mime_type: format.mime_type ?? null },
      });
      const twin = { sourceId: id, path, source: data.source, field: data.field, line: data.line, twinOf: data.path };
      if ('location' in data) context.remoteFiles.push({ ...twin, location: data.location });
      else context.localFiles.push(twin);
    }
  }
  twins?.sources.sort((a, b) => compareVersionsNewestFirst(a.version, b.version));
}

type FormatTable = ResolveContext['formats'];

/** The twins' format and the ids of the GeoParquet formats, per table of formats: asked once per file of the catalog. */
const TWIN_FORMATS = new WeakMap<FormatTable, { format: ReturnType<FormatTable['get']>; geoparquet: Set<number> }>();

function twinFormats(table: FormatTable): { format: ReturnType<FormatTable['get']>; geoparquet: Set<number> } {
  const known = TWIN_FORMATS.get(table);
  if (known) return known;
  const formats = [...table.values()];
  const found = {
    format: formats.find((candidate) => candidate.format_type === 'pmtiles'),
    geoparquet: new Set(formats.filter((candidate) => candidate.format_type === 'geoparquet').map((candidate) => candidate.id)),
  };
  TWIN_FORMATS.set(table, found);
  return found;
}
