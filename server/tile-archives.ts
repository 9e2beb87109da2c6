import { join } from 'node:path';
import { PMTiles } from 'pmtiles';
import type { TileArchive } from '../core/api/ogc/layers.ts';
import type { RemoteCopies } from '../query/sources.ts';
import type { ArchiveFacts } from '../core/api/ogc/tiles.ts';
import { PmTilesFileSource } from '../runtime/pmtiles-file-source.ts';

/** Archives kept open at once: a reader caches the archive's header and directories, which tile reads reuse. */
const KEPT_ARCHIVES = 64;

/** An open PMTiles archive of the data folder, and what its header and metadata say. */
export interface OpenArchive {
  reader: PMTiles;
  facts: ArchiveFacts;
}

/**
 * Opens the PMTiles twins by range reads (the `pmtiles` package over a local file, as a browser reads one over HTTP),
 * keeping the most recently used. A twin in object storage is read from the local copy the query service keeps of
 * remote objects (`remoteCopy`, query/sources.ts), as a download-zip is. A new build may write a twin again at the
 * same path, so an archive is kept under its build.
 */
export function createTileArchives(dataDir: string, remoteCopy: RemoteCopies['get']): (archive: TileArchive, buildId: string) => Promise<OpenArchive> {
  const open = new Map<string, Promise<OpenArchive>>();
  const pathOf = async (archive: TileArchive) => (archive.remote ? (await remoteCopy(archive.remote, archive.path)).file : join(dataDir, archive.path));
  return (archive, buildId) => {
    const key = `${buildId}\n${archive.remote?.slug ?? ''}\n${archive.path}`;
    let opened = open.get(key);
    if (opened) {
      open.delete(key);
    } else {
      opened = pathOf(archive).then(readArchive);
      opened.catch(() => open.delete(key));
    }
    open.set(key, opened);
    if (open.size > KEPT_ARCHIVES) open.delete(open.keys().next().value!);
    return opened;
  };
}

async function readArchive(path: string): Promise<OpenArchive> {
  const reader = new PMTiles(new PmTilesFileSource(path));
  const header = await reader.getHeader();
  const metadata = (await reader.getMetadata()) as { vector_layers?: { id?: unknown; fields?: unknown }[] } | undefined;
  const layers = (metadata?.vector_layers ?? []).filter((layer) => typeof layer.id === 'string').map((layer) => ({
    id: layer.id as string,
    fields: typeof layer.fields === 'object' && layer.fields !== null ? (layer.fields as Record<string, string>) : {},
  }));
  return { reader, facts: { minZoom: header.minZoom, maxZoom: header.maxZoom, bounds: [header.minLon, header.minLat, header.maxLon, header.maxLat], layers } };
}
