import type { FileDoc, SchemaDoc } from './view-types.ts';

/** What a file page previews and maps, read from its documents; the page and the build's map picture share it. */
export interface FileMapFacts {
  /** The GeoParquet source the browser reads rows from; null when the version shown has none. */
  previewUrl: string | null;
  /** The PMTiles archive of the version shown (the build's twin of the GeoParquet file); null when there is none. */
  tilesUrl: string | null;
  /** That archive's path under its storage location, for the build to read it from the data folder. */
  tilesPath: string | null;
  /** [west, south, east, north]; west > east crosses the antimeridian. */
  bounds: [number, number, number, number] | null;
  /** Whether the page has a map at all: something to read, frame or draw. */
  showMap: boolean;
}

/** The map facts of a file page. */
export function readFileMapFacts(file: FileDoc, schemaDoc: SchemaDoc): FileMapFacts {
  const schema = schemaDoc.schema;
  const metadata = schema?.source_metadata ?? file.file.file_metadata ?? null;
  const previewUrl = schema?.format_type === 'geoparquet' ? (schema.source.url ?? null) : null;
  // The map draws the whole file from the PMTiles archive of the version shown (the build makes one per GeoParquet file).
  const tiles = (file.file.formats ?? [])
    .find((link) => link.format.format_type === 'pmtiles')
    ?.sources.find((source) => String(source.version) === String(schemaDoc.selected_version));
  const bounds = metadata?.bounds && metadata.bounds.length === 4 ? (metadata.bounds as [number, number, number, number]) : null;
  const tilesUrl = tiles?.url ?? null;
  return {
    previewUrl,
    tilesUrl,
    tilesPath: tiles && tiles.location.type === 'file' ? tiles.location.path : null,
    bounds,
    showMap: previewUrl !== null || bounds !== null || tilesUrl !== null,
  };
}
