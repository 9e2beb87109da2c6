import type { CatalogIndex } from '../../catalog-index.ts';
import type { FileModel } from '../../model.ts';
import type { ColumnSchema } from '../../../schemas/column.ts';
import type { FileMetadata } from '../../../schemas/file-metadata.ts';
import type { VersionChanges } from '../../../schemas/version-changes.ts';
import { listVersions, pickSchemaSource } from './resources.ts';

/** The statistics of a column whose moves a diff reports, in this order. */
const STATISTICS = ['min', 'max', 'num_null_values', 'num_unique_values', 'length'] as const satisfies readonly (keyof ColumnSchema)[];

/**
 * What changed between each version of a file and the one before it, newest first: columns added, removed or
 * retyped, the row count, the bounds, the invalid geometries, and the statistics that moved. Each version is read
 * from its best schema source (GeoParquet, then GeoJSON); a version without one is compared with nothing.
 */
export function describeVersionChanges(file: FileModel, index: CatalogIndex): VersionChanges[] {
  const versions = listVersions(file.formats.flatMap((link) => link.sources));
  const changes: VersionChanges[] = [];
  for (let position = 0; position + 1 < versions.length; position += 1) {
    const after = pickSchemaSource(file, index, versions[position])?.source.metadata;
    const before = pickSchemaSource(file, index, versions[position + 1])?.source.metadata;
    if (!after || !before) continue;
    changes.push(compareVersions(versions[position]!, versions[position + 1]!, before, after));
  }
  return changes;
}

/** The changes from `before` (version `previous`) to `after` (version `version`). */
function compareVersions(version: string, previous: string, before: FileMetadata, after: FileMetadata): VersionChanges {
  const oldColumns = new Map((before.columns ?? []).map((column) => [column.name, column]));
  const newColumns = new Map((after.columns ?? []).map((column) => [column.name, column]));
  const statistics: VersionChanges['statistics'] = [];
  for (const [name, column] of newColumns) {
    const old = oldColumns.get(name);
    if (!old || old.type !== column.type) continue;
    for (const statistic of STATISTICS) {
      const from = old[statistic] ?? null;
      const to = column[statistic] ?? null;
      if (from !== to) statistics.push({ column: name, statistic, from, to });
    }
  }
  return {
    version,
    previous,
    columns: {
      added: [...newColumns.values()].filter((column) => !oldColumns.has(column.name)).map(({ name, type }) => ({ name, type })),
      removed: [...oldColumns.values()].filter((column) => !newColumns.has(column.name)).map(({ name, type }) => ({ name, type })),
      retyped: [...newColumns.values()].flatMap((column) => {
        const old = oldColumns.get(column.name);
        return old && old.type !== column.type ? [{ name: column.name, from: old.type, to: column.type }] : [];
      }),
    },
    row_count: changed(before.feature_count ?? null, after.feature_count ?? null),
    bounds: JSON.stringify(before.bounds ?? null) === JSON.stringify(after.bounds ?? null) ? null : { from: before.bounds ?? null, to: after.bounds ?? null },
    invalid_geometry_count: changed(before.invalid_geometry_count ?? null, after.invalid_geometry_count ?? null),
    statistics,
  };
}

function changed<T>(from: T, to: T): { from: T; to: T } | null {
  return from === to ? null : { from, to };
}
