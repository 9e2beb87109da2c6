/**
 * The fixed parts of an OGC GeoPackage 1.3 (OGC 12-128r18): header values,
 * the DDL of the required metadata tables (Annex C) and the three required
 * spatial reference systems.
 */

/** SQLite application_id: the ASCII bytes "GPKG". */
export const GPKG_APPLICATION_ID = 0x47504b47;

/** SQLite user_version for GeoPackage 1.3.0. */
export const GPKG_USER_VERSION = 10300;

/** srs_id of EPSG:4326, the CRS of every layer written here. */
export const WGS84_SRS_ID = 4326;

/** The DDL of gpkg_spatial_ref_sys, gpkg_contents and gpkg_geometry_columns, as in the spec's Annex C. */
export const GPKG_SCHEMA = `
CREATE TABLE gpkg_spatial_ref_sys (
  srs_name TEXT NOT NULL,
  srs_id INTEGER NOT NULL PRIMARY KEY,
  organization TEXT NOT NULL,
  organization_coordsys_id INTEGER NOT NULL,
  definition TEXT NOT NULL,
  description TEXT
);
CREATE TABLE gpkg_contents (
  table_name TEXT NOT NULL PRIMARY KEY,
  data_type TEXT NOT NULL,
  identifier TEXT UNIQUE,
  description TEXT DEFAULT '',
  last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  min_x DOUBLE,
  min_y DOUBLE,
  max_x DOUBLE,
  max_y DOUBLE,
  srs_id INTEGER,
  CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id)
);
CREATE TABLE gpkg_geometry_columns (
  table_name TEXT NOT NULL,
  column_name TEXT NOT NULL,
  geometry_type_name TEXT NOT NULL,
  srs_id INTEGER NOT NULL,
  z TINYINT NOT NULL,
  m TINYINT NOT NULL,
  CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
  CONSTRAINT uk_gc_table_name UNIQUE (table_name),
  CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
  CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id)
);
`;

/** A row of gpkg_spatial_ref_sys. */
export type SpatialRefSys = {
  srs_name: string;
  srs_id: number;
  organization: string;
  organization_coordsys_id: number;
  definition: string;
  description: string;
};

const WGS84_WKT =
  'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],' +
  'AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],' +
  'UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AUTHORITY["EPSG","4326"]]';

/** The rows the spec requires: EPSG:4326, and the undefined cartesian (-1) and geographic (0) systems. */
export const GPKG_SPATIAL_REF_SYS: readonly SpatialRefSys[] = [
  {
    srs_name: 'WGS 84 geodetic',
    srs_id: WGS84_SRS_ID,
    organization: 'EPSG',
    organization_coordsys_id: 4326,
    definition: WGS84_WKT,
    description: 'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid',
  },
  {
    srs_name: 'Undefined cartesian SRS',
    srs_id: -1,
    organization: 'NONE',
    organization_coordsys_id: -1,
    definition: 'undefined',
    description: 'undefined cartesian coordinate reference system',
  },
  {
    srs_name: 'Undefined geographic SRS',
    srs_id: 0,
    organization: 'NONE',
    organization_coordsys_id: 0,
    definition: 'undefined',
    description: 'undefined geographic coordinate reference system',
  },
];
