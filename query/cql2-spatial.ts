import { BLOB, BOOLEAN, DuckDBBlobValue, DuckDBScalarFunction, INTEGER, type DuckDBConnection } from '@duckdb/node-api';
import { openGeosContext, readGeoJsonGeometry, type GeoJsonGeos, type GeosContext } from '../runtime/geos.ts';
import { queryFailure } from './errors.ts';

/**
 * The spatial functions of CQL2 filters, run by GEOS: DuckDB's core has no spatial predicates, and its spatial
 * extension cannot be loaded in the sandbox (extensions are neither installed nor loaded there). The filter's
 * geometry literals are prepared once per query; each row's geometry (WKB) is tested against one of them by a
 * scalar function registered on the query's connection, after the `bbox` covering has pruned the row groups.
 */

/** A prepared predicate of a literal against a row: P(literal, row), as GEOS's prepared geometries test. */
export type SpatialTest = 'intersects' | 'disjoint' | 'touches' | 'overlaps' | 'crosses' | 'contains' | 'within' | 'equals';

/** A geometry literal of the filter in the file's CRS (GeoJSON), and what to test of it against each row. */
export interface SpatialLiteral {
  geometry: object;
  test: SpatialTest;
}

interface SpatialGeos extends GeoJsonGeos {
  GEOSGeomFromWKB_buf_r(context: number, wkb: number, size: number): number;
  GEOSPrepare_r(context: number, geometry: number): number;
  GEOSPreparedGeom_destroy_r(context: number, prepared: number): unknown;
  GEOSPreparedIntersects_r(context: number, prepared: number, geometry: number): number;
  GEOSPreparedDisjoint_r(context: number, prepared: number, geometry: number): number;
  GEOSPreparedTouches_r(context: number, prepared: number, geometry: number): number;
  GEOSPreparedOverlaps_r(context: number, prepared: number, geometry: number): number;
  GEOSPreparedCrosses_r(context: number, prepared: number, geometry: number): number;
  GEOSPreparedContains_r(context: number, prepared: number, geometry: number): number;
  GEOSPreparedWithin_r(context: number, prepared: number, geometry: number): number;
  GEOSEquals_r(context: number, a: number, b: number): number;
}

let session: Promise<GeosContext<SpatialGeos> & { reader: number }> | undefined;
let named = 0;

/** A name for the next query's spatial function: a kept sandbox sees several queries, each with its own literals. */
export function nameSpatialFunction(): string {
  return `geoshelf_cql2_spatial_${++named}`;
}

/**
 * Prepares the literals and registers the scalar function `name(literal INTEGER, wkb BLOB) → BOOLEAN` on the
 * connection; returns a release of the prepared geometries, to call when the query ends. A literal GEOS cannot
 * read, or calls invalid, fails the query as a bad filter.
 */
export async function registerSpatialTests(connection: DuckDBConnection, { name, literals }: { name: string; literals: SpatialLiteral[] }): Promise<() => void> {
  session ??= openGeosContext<SpatialGeos>().then((opened) => ({ ...opened, reader: opened.geos.GEOSGeoJSONReader_create_r(opened.context) }));
  const opened = await session;
  const { geos, context, reader, lastError } = opened;
  const prepared: { geometry: number; prepared: number; test: SpatialTest }[] = [];
  const release = () => {
    for (const entry of prepared.splice(0)) {
      geos.GEOSPreparedGeom_destroy_r(context, entry.prepared);
      geos.GEOSGeom_destroy_r(context, entry.geometry);
    }
  };
  try {
    for (const literal of literals) {
      const geometry = readGeoJsonGeometry(opened, reader, JSON.stringify(literal.geometry));
      if (!geometry) throw queryFailure('invalid_filter', `holds a geometry GEOS cannot read (${lastError() || 'unknown reason'})`);
      if (geos.GEOSisValid_r(context, geometry) !== 1) {
        const reason = geos.GEOSisValidReason_r(context, geometry);
        const message = reason ? geos.Module.UTF8ToString(reason) : 'invalid';
        if (reason) geos.GEOSFree_r(context, reason);
        geos.GEOSGeom_destroy_r(context, geometry);
        throw queryFailure('invalid_filter', `holds an invalid geometry (GEOS: ${message})`);
      }
      prepared.push({ geometry, prepared: geos.GEOSPrepare_r(context, geometry), test: literal.test });
    }
  } catch (error) {
    release();
    throw error;
  }
  let buffer = 0;
  let capacity = 0;
  connection.registerScalarFunction(DuckDBScalarFunction.create({
    name,
    returnType: BOOLEAN,
    parameterTypes: [INTEGER, BLOB],
    mainFunction: (_info, input, output) => {
      const literals = input.getColumnVector(0);
      const rows = input.getColumnVector(1);
      for (let row = 0; row < input.rowCount; row++) {
        const literal = prepared[literals.getItem(row) as number];
        const wkb = rows.getItem(row);
        if (!literal || !(wkb instanceof DuckDBBlobValue)) {
          output.setItem(row, null);
          continue;
        }
        const bytes = wkb.bytes;
        if (bytes.length > capacity) {
          if (buffer) geos.Module._free(buffer);
          capacity = Math.max(65_536, 2 ** Math.ceil(Math.log2(bytes.length)));
          buffer = geos.Module._malloc(capacity);
        }
        // HEAPU8 is replaced when the WebAssembly memory grows: looked up on every row.
        geos.Module.HEAPU8.set(bytes, buffer);
        const geometry = geos.GEOSGeomFromWKB_buf_r(context, buffer, bytes.length);
        if (!geometry) {
          output.setItem(row, null);
          continue;
        }
        const answer = testPrepared(geos, context, literal, geometry);
        geos.GEOSGeom_destroy_r(context, geometry);
        output.setItem(row, answer === 2 ? null : answer === 1);
      }
      output.flush();
    },
  }));
  return release;
}

function testPrepared(geos: SpatialGeos, context: number, literal: { geometry: number; prepared: number; test: SpatialTest }, row: number): number {
  const { prepared } = literal;
  switch (literal.test) {
    case 'intersects': return geos.GEOSPreparedIntersects_r(context, prepared, row);
    case 'disjoint': return geos.GEOSPreparedDisjoint_r(context, prepared, row);
    case 'touches': return geos.GEOSPreparedTouches_r(context, prepared, row);
    case 'overlaps': return geos.GEOSPreparedOverlaps_r(context, prepared, row);
    case 'crosses': return geos.GEOSPreparedCrosses_r(context, prepared, row);
    case 'contains': return geos.GEOSPreparedContains_r(context, prepared, row);
    case 'within': return geos.GEOSPreparedWithin_r(context, prepared, row);
    case 'equals': return geos.GEOSEquals_r(context, literal.geometry, row);
  }
}
