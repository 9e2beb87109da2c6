import type { StoredFileFacts, FileModel } from '../../core/model.ts';
import type { ColumnSchema } from '../../schemas/column.ts';
import type { FileMetadata, InvalidGeometryReason } from '../../schemas/file-metadata.ts';
import { hashColumns } from './column-stats.ts';
import type { PmTilesInfo } from '../../runtime/pmtiles-info.ts';
import type { DataFacts } from './inspect-data-file.ts';

/**
 * The quality rule, documented in the README: a file passes when it has at least one feature, a geometry
 * column, no null, empty or invalid geometry (invalid as GEOS judges it), and WGS84 bounds inside
 * [-180, -90, 180, 90].
 */
export function passesQualityCheck(facts: DataFacts): boolean {
  const geometry = facts.geometry;
  if (facts.rows === 0 || !geometry || geometry.invalid > 0 || geometry.empty > 0 || geometry.nulls > 0 || !geometry.bounds) return false;
  const [west, south, east, north] = geometry.bounds;
  return west >= -180 && south >= -90 && east <= 180 && north <= 90;
}

/** Fills a source's metadata from the facts of its data file, with the steward's column descriptions. */
export function applyFacts(metadata: FileMetadata, facts: DataFacts, file: FileModel): void {
  const geometry = facts.geometry;
  const types = geometry ? Object.keys(geometry.types).sort() : [];
  metadata.feature_count = facts.rows;
  metadata.bounds = geometry?.bounds ?? null;
  metadata.geometry_type = types.length === 0 ? null : types.join(', ');
  metadata.invalid_geometry_count = geometry ? geometry.invalid : null;
  metadata.invalid_geometry_reasons = geometry ? sortReasons(geometry.reasons) : null;
  metadata.empty_geometry_count = geometry ? geometry.empty : null;
  metadata.quality_check_passed = passesQualityCheck(facts);
  metadata.columns_hash = hashColumns(facts.columns.map((column) => ({ name: column.name, type: column.duckdbType })));
  metadata.columns = facts.columns.map((column): ColumnSchema => ({
    name: column.name,
    type: column.type,
    nullable: column.nulls > 0,
    description: file.column_descriptions[column.name] ?? null,
    num_null_values: column.nulls,
    num_unique_values: column.distinct,
    example_values: column.examples,
    min: column.min,
    max: column.max,
    length: column.length,
    possible_values: column.possible,
  }));
}

/** Reasons with their keys sorted, so the documents do not depend on which invalid geometry came first. */
function sortReasons(reasons: Partial<Record<InvalidGeometryReason, number>>): Partial<Record<InvalidGeometryReason, number>> {
  return Object.fromEntries(Object.entries(reasons).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * What a source keeps of its file besides its metadata: its hash, and for a file that was inspected its CRS,
 * geometry column and time ranges.
 */
export function storedFacts(sha256: string, facts: DataFacts | null = null): StoredFileFacts {
  return { sha256, crs: facts?.geometry?.crs ?? null, geometry_column: facts?.geometry?.column ?? null, times: facts ? listTimes(facts) : [] };
}

/** The first and last value of each date or timestamp column that has any. */
function listTimes(facts: DataFacts): StoredFileFacts['times'] {
  return facts.columns.flatMap((column) => (column.earliest && column.latest ? [{ column: column.name, first: column.earliest, last: column.latest }] : []));
}

/**
 * Fills a PMTiles source's bounds from its archive's header and, for a twin, its feature count: a twin records
 * how many features it was made of, and every one of them is in its highest zoom's tiles.
 */
export function applyPmTilesInfo(metadata: FileMetadata, { header, metadata: archive }: PmTilesInfo): void {
  metadata.bounds = [header.minLon, header.minLat, header.maxLon, header.maxLat];
  const features = (archive.geoshelf as { features?: unknown } | undefined)?.features;
  if (typeof features === 'number') metadata.feature_count = features;
}
