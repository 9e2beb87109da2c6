/** The formats `geoshelf add` knows data files by, and the records it writes for them in `formats.yaml`. */

/** Tables of text that `--convert` turns into GeoParquet (longitude/latitude or WKT columns). */
export const CSV_EXTENSIONS = new Set(['.csv', '.tsv']);

/** The format each kind of data file is, by extension (a `.gdb` is a folder). */
export const FORMAT_BY_EXTENSION: Record<string, string> = {
  '.parquet': 'geoparquet', '.geoparquet': 'geoparquet', '.geojson': 'geojson', '.shp': 'shapefile',
  '.gpkg': 'geopackage', '.gdb': 'file_geodatabase', '.pmtiles': 'pmtiles',
};

/** The format records `add` writes when `formats.yaml` lacks a format of the type. */
export const FORMAT_RECORDS: Record<string, { slug: string; name: string; mime_type: string; description: string }> = {
  geoparquet: { slug: 'geoparquet', name: 'GeoParquet 1.1', mime_type: 'application/vnd.apache.parquet', description: 'Columnar Parquet with GeoParquet metadata, for analysis in DuckDB, GeoPandas, GDAL or QGIS.' },
  geojson: { slug: 'geojson', name: 'GeoJSON', mime_type: 'application/geo+json', description: 'RFC 7946 FeatureCollection, readable by almost every web map and GIS.' },
  shapefile: { slug: 'shapefile', name: 'ESRI Shapefile', mime_type: 'application/x-esri-shape', description: 'A .shp with its sidecars; download them together through the source\'s download_zip link.' },
  geopackage: { slug: 'geopackage', name: 'GeoPackage', mime_type: 'application/geopackage+sqlite3', description: 'OGC GeoPackage: one SQLite file that can hold several layers.' },
  file_geodatabase: { slug: 'file-geodatabase', name: 'Esri File Geodatabase', mime_type: 'application/x-filegdb', description: 'An Esri .gdb folder of one or more layers, downloaded as one archive.' },
  pmtiles: { slug: 'pmtiles', name: 'PMTiles v3', mime_type: 'application/vnd.pmtiles', description: 'Vector tiles in one archive that a web map reads from static hosting with range requests; geoshelf makes one beside each GeoParquet file.' },
};
