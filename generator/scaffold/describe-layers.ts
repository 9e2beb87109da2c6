/**
 * The layers of the data files `geoshelf add` describes and each one's columns, read as the build reads them and
 * kept in the build's caches, so the build that follows reads them no more.
 */
import { basename, relative, sep } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { DataCache } from '../enrich/data-cache.ts';
import type { DataFacts } from '../enrich/inspect-data-file.ts';
import { factsKey, INSPECTORS, MULTI_FILE } from '../enrich/inspectors.ts';
import { measure } from '../enrich/enrich-sources.ts';
import { listGdalLayers } from '../enrich/inspect-gdal.ts';
import type { WholeReader } from '../enrich/remote-whole.ts';
import type { DataFile } from './find-data-files.ts';

/** What describing a data file reads with: the build's caches, its DuckDB, and the remote reader opened on first use. */
export interface ReadContext {
  cache: DataCache<DataFacts>;
  /** The reader of files in object storage, opened on first use. */
  remoteReader: () => Promise<WholeReader>;
  env: NodeJS.ProcessEnv;
  /** Paths whose hashes this run used, added to: kept in the cache's memo with those it had. */
  usedPaths: Set<string>;
  dataDir: string;
  duckdb: () => Promise<DuckDBInstance>;
  scratchDir: string;
}

/**
 * The layers of a data file and each one's columns. A file the build inspects is inspected here the same way, and
 * its facts kept in the build's cache, so the build that follows reads it no more. A GeoPackage's layers and
 * columns come from its own tables (`gpkg_contents`), a PMTiles archive has none.
 */
export async function describeLayers(path: string, formatType: string, context: ReadContext): Promise<{ layer: string | null; columns: string[] }[]> {
  if (formatType === 'pmtiles') return [{ layer: null, columns: [] }];
  if (formatType === 'geopackage') return describeGeoPackage(path);
  const { sha256 } = await measure({ path, relative: relative(context.dataDir, path).split(sep).join('/'), formatType }, context.cache, context.usedPaths, context.dataDir);
  return inspectLayers(path, formatType, sha256, context);
}

/**
 * The layers of a file in object storage and each one's columns, read as the build reads it, into the build's
 * caches: a GeoPackage's from its tables, a File Geodatabase's layers each inspected, in one download.
 */
export async function describeRemoteLayers(file: DataFile, context: ReadContext): Promise<Layer[]> {
  if (file.formatType === 'pmtiles') return [{ layer: null, columns: [] }];
  const { listRemoteParts, openRemoteObject } = await import('../../runtime/remote-object.ts');
  const location = file.remote!.model;
  const listed = MULTI_FILE.has(file.formatType)
    ? await listRemoteParts(location, file.path, file.formatType, context.env)
    : [{ name: basename(file.path), object: openRemoteObject(location, file.path, context.env) }];
  const parts = await Promise.all(listed.map(async ({ name, object }) => ({ name, object, version: await object.head() })));
  const reader = await context.remoteReader();
  if (file.formatType === 'geopackage') return reader.withCopy(parts, file.formatType, async (path) => describeGeoPackage(path));
  if (file.formatType === 'file_geodatabase') return reader.withCopy(parts, file.formatType, (path, sha256) => inspectLayers(path, file.formatType, sha256, context));
  const { facts } = await reader.read(parts, file.formatType, null);
  return [{ layer: null, columns: columnsOf(facts!) }];
}

/** A layer of a data file, and the columns to describe (not its geometry and bbox). */
interface Layer {
  layer: string | null;
  columns: string[];
}

/** Each layer's columns, from the cache of facts by the file's SHA-256, or inspected and kept there. */
async function inspectLayers(path: string, formatType: string, sha256: string, context: ReadContext): Promise<Layer[]> {
  const layers = formatType === 'file_geodatabase' ? await listGdalLayers(path) : [null];
  const inspect = INSPECTORS[formatType]!;
  const described: Layer[] = [];
  for (const layer of layers) {
    const key = factsKey(formatType, sha256, layer);
    let facts = context.cache.get(key);
    if (!facts) {
      facts = await inspect(await context.duckdb(), path, { scratchDir: context.scratchDir, layer });
      context.cache.set(key, facts);
    }
    described.push({ layer, columns: columnsOf(facts) });
  }
  return described;
}

function columnsOf(facts: DataFacts): string[] {
  return facts.columns.map((column) => column.name).filter((name) => name !== facts.geometry?.column && name !== 'bbox');
}

/** A GeoPackage's feature layers and their attribute columns, from its tables. */
export function describeGeoPackage(path: string): { layer: string | null; columns: string[] }[] {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const layers = database.prepare("SELECT table_name AS name FROM gpkg_contents WHERE data_type = 'features' ORDER BY table_name").all() as { name: string }[];
    const geometries = new Set((database.prepare('SELECT table_name || \'.\' || column_name AS name FROM gpkg_geometry_columns').all() as { name: string }[]).map((row) => row.name));
    return layers.map(({ name }) => ({
      layer: name,
      columns: (database.prepare(`PRAGMA table_info("${name.replaceAll('"', '""')}")`).all() as { name: string; pk: number }[])
        .filter((column) => column.pk === 0 && !geometries.has(`${name}.${column.name}`)).map((column) => column.name),
    }));
  } catch (error) {
    throw new Error(`it is not a GeoPackage (${(error as Error).message})`);
  } finally {
    database.close();
  }
}
