import proj4, { type Converter } from 'proj4';
import type { Geometry, Position } from './wkb.ts';

/**
 * Coordinate reference systems geoshelf can reproject from and to, offline. proj4 knows EPSG:4326 and
 * EPSG:3857; the rest are bundled here as proj strings (from the EPSG registry). UTM zones on WGS84
 * (EPSG:32601–32660, 32701–32760) and ETRS89 (EPSG:25828–25838) are generated.
 */
const BUNDLED: Record<string, string> = {
  'EPSG:4269': '+proj=longlat +datum=NAD83 +no_defs',
  'EPSG:4258': '+proj=longlat +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +no_defs',
  'EPSG:3395': '+proj=merc +lon_0=0 +k=1 +x_0=0 +y_0=0 +datum=WGS84 +units=m +no_defs',
  'EPSG:3035': '+proj=laea +lat_0=52 +lon_0=10 +x_0=4321000 +y_0=3210000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs',
  'EPSG:2154': '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs',
  'EPSG:27700': '+proj=tmerc +lat_0=49 +lon_0=-2 +k=0.9996012717 +x_0=400000 +y_0=-100000 +ellps=airy +towgs84=446.448,-125.157,542.06,0.15,0.247,0.842,-20.489 +units=m +no_defs',
  'EPSG:5070': '+proj=aea +lat_0=23 +lon_0=-96 +lat_1=29.5 +lat_2=45.5 +x_0=0 +y_0=0 +datum=NAD83 +units=m +no_defs',
  'EPSG:2056': '+proj=somerc +lat_0=46.9524055555556 +lon_0=7.43958333333333 +k_0=1 +x_0=2600000 +y_0=1200000 +ellps=bessel +towgs84=674.374,15.056,405.346,0,0,0,0 +units=m +no_defs',
  'EPSG:28992': '+proj=sterea +lat_0=52.1561605555556 +lon_0=5.38763888888889 +k=0.9999079 +x_0=155000 +y_0=463000 +ellps=bessel +towgs84=565.4171,50.3319,465.5524,1.9342,-1.6677,9.1019,4.0725 +units=m +no_defs',
  'EPSG:3577': '+proj=aea +lat_0=0 +lon_0=132 +lat_1=-18 +lat_2=-36 +x_0=0 +y_0=0 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs',
};
for (let zone = 1; zone <= 60; zone++) {
  BUNDLED[`EPSG:${32600 + zone}`] = `+proj=utm +zone=${zone} +datum=WGS84 +units=m +no_defs`;
  BUNDLED[`EPSG:${32700 + zone}`] = `+proj=utm +zone=${zone} +south +datum=WGS84 +units=m +no_defs`;
}
for (let zone = 28; zone <= 38; zone++) {
  BUNDLED[`EPSG:${25800 + zone}`] = `+proj=utm +zone=${zone} +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs`;
}
for (const [code, definition] of Object.entries(BUNDLED)) proj4.defs(code, definition);

/** Codes that mean longitude/latitude on WGS84, so no reprojection is needed. */
const LON_LAT = new Set(['EPSG:4326', 'OGC:CRS84', 'CRS84', 'EPSG:4979', 'OGC:CRS84H']);

/**
 * Normalises a CRS given as text (`EPSG:3857`, `epsg:3857`, `OGC:CRS84`) or as PROJJSON with an `id`, to an
 * `AUTHORITY:CODE` string that proj4 knows. Undefined when it is not one we can use.
 * @example resolveCrs({ id: { authority: 'EPSG', code: 5070 } }) // 'EPSG:5070'
 */
export function resolveCrs(crs: unknown): string | undefined {
  let code: string | undefined;
  if (typeof crs === 'string') code = crs.trim().toUpperCase().replace(/^URN:OGC:DEF:CRS:(\w+)::?/, '$1:');
  else if (crs && typeof crs === 'object' && 'id' in crs) {
    const id = (crs as { id?: { authority?: unknown; code?: unknown } }).id;
    if (id && typeof id.authority === 'string' && (typeof id.code === 'number' || typeof id.code === 'string')) code = `${id.authority.toUpperCase()}:${id.code}`;
  }
  if (code === undefined) return undefined;
  if (LON_LAT.has(code)) return code === 'EPSG:4326' ? code : 'OGC:CRS84';
  return proj4.defs(code) ? code : undefined;
}

/** Whether a resolved CRS holds longitude/latitude on WGS84, so coordinates need no reprojection. */
export function isLonLat(code: string): boolean {
  return code === 'EPSG:4326' || code === 'OGC:CRS84';
}

/**
 * Reprojects a bounding box to WGS84 longitude/latitude (or to `toCode`). The edges are densified (32 points
 * each), so a curved edge of the projected box still bounds the data.
 */
export function reprojectBounds(bounds: [number, number, number, number], fromCode: string, toCode = 'EPSG:4326'): [number, number, number, number] {
  if (isLonLat(fromCode) && isLonLat(toCode)) return bounds;
  const transform = proj4(fromCode, toCode);
  const [xmin, ymin, xmax, ymax] = bounds;
  const out = [Infinity, Infinity, -Infinity, -Infinity] as [number, number, number, number];
  const steps = 32;
  for (let step = 0; step <= steps; step++) {
    const t = step / steps;
    for (const [x, y] of [[xmin + (xmax - xmin) * t, ymin], [xmin + (xmax - xmin) * t, ymax], [xmin, ymin + (ymax - ymin) * t], [xmax, ymin + (ymax - ymin) * t]] as const) {
      const [lon, lat] = transform.forward([x, y]);
      if (!Number.isFinite(lon) || !Number.isFinite(lat)) continue;
      out[0] = Math.min(out[0], lon);
      out[1] = Math.min(out[1], lat);
      out[2] = Math.max(out[2], lon);
      out[3] = Math.max(out[3], lat);
    }
  }
  return out;
}

/**
 * OGC:CRS84 (longitude/latitude on WGS84) as PROJJSON, as PROJ 9 writes it (`projinfo OGC:CRS84 -o PROJJSON -q`):
 * the `crs` `geoshelf convert` writes, so a reader need not rely on GeoParquet's default.
 */
export const CRS84_PROJJSON = {
  "$schema": "https://proj.org/schemas/v0.5/projjson.schema.json",
  "type": "GeographicCRS",
  "name": "WGS 84 (CRS84)",
  "datum_ensemble": {
    "name": "World Geodetic System 1984 ensemble",
    "members": [
      {
        "name": "World Geodetic System 1984 (Transit)",
        "id": {
          "authority": "EPSG",
          "code": 1166
        }
      },
      {
        "name": "World Geodetic System 1984 (G730)",
        "id": {
          "authority": "EPSG",
          "code": 1152
        }
      },
      {
        "name": "World Geodetic System 1984 (G873)",
        "id": {
          "authority": "EPSG",
          "code": 1153
        }
      },
      {
        "name": "World Geodetic System 1984 (G1150)",
        "id": {
          "authority": "EPSG",
          "code": 1154
        }
      },
      {
        "name": "World Geodetic System 1984 (G1674)",
        "id": {
          "authority": "EPSG",
          "code": 1155
        }
      },
      {
        "name": "World Geodetic System 1984 (G1762)",
        "id": {
          "authority": "EPSG",
          "code": 1156
        }
      },
      {
        "name": "World Geodetic System 1984 (G2139)",
        "id": {
          "authority": "EPSG",
          "code": 1309
        }
      }
    ],
    "ellipsoid": {
      "name": "WGS 84",
      "semi_major_axis": 6378137,
      "inverse_flattening": 298.257223563
    },
    "accuracy": "2.0",
    "id": {
      "authority": "EPSG",
      "code": 6326
    }
  },
  "coordinate_system": {
    "subtype": "ellipsoidal",
    "axis": [
      {
        "name": "Geodetic longitude",
        "abbreviation": "Lon",
        "direction": "east",
        "unit": "degree"
      },
      {
        "name": "Geodetic latitude",
        "abbreviation": "Lat",
        "direction": "north",
        "unit": "degree"
      }
    ]
  },
  "scope": "Not known.",
  "area": "World.",
  "bbox": {
    "south_latitude": -90,
    "west_longitude": -180,
    "north_latitude": 90,
    "east_longitude": 180
  },
  "id": {
    "authority": "OGC",
    "code": "CRS84"
  }
} as const;

/**
 * Reprojects a position to longitude/latitude on WGS84, in place (a third coordinate is kept as it is).
 * Made by `createLonLatTransform`.
 */
export type PositionTransform = (position: Position) => void;

/**
 * How to bring coordinates in `crs` to longitude/latitude: a code `resolveCrs` knows (`EPSG:2056`), a PROJ string
 * (`+proj=utm +zone=32 +datum=WGS84`) or OGC WKT. Null when `crs` is longitude/latitude already.
 * @throws Error saying which CRS geoshelf knows, when proj4 cannot use `crs`.
 * @example createLonLatTransform('EPSG:2056')?.(position)
 */
export function createLonLatTransform(crs: string): PositionTransform | null {
  const code = resolveCrs(crs);
  if (code !== undefined && isLonLat(code)) return null;
  let converter: Converter;
  try {
    converter = proj4(code ?? crs, 'EPSG:4326');
  } catch {
    throw new Error(
      `the CRS ${JSON.stringify(crs)} is not one geoshelf knows offline: give an EPSG code it bundles (EPSG:4326, 3857, 2056, 2154, 27700, 28992, 3035, 3395, 3577, 4258, 4269, 5070, UTM zones 326xx/327xx, ETRS89 258xx), a PROJ string (+proj=…) or WKT`,
    );
  }
  return (position) => {
    const [x, y] = converter.forward([position[0]!, position[1]!]);
    position[0] = x;
    position[1] = y;
  };
}

/** Applies `transform` to every position of `geometry`, in place. */
export function transformGeometry(geometry: Geometry, transform: PositionTransform): void {
  switch (geometry.type) {
    case 'Point':
      if (geometry.coordinates.length > 0) transform(geometry.coordinates);
      return;
    case 'LineString':
    case 'MultiPoint':
      for (const position of geometry.coordinates) transform(position);
      return;
    case 'Polygon':
    case 'MultiLineString':
      for (const line of geometry.coordinates) for (const position of line) transform(position);
      return;
    case 'MultiPolygon':
      for (const polygon of geometry.coordinates) for (const ring of polygon) for (const position of ring) transform(position);
      return;
    case 'GeometryCollection':
      for (const part of geometry.geometries) transformGeometry(part, transform);
      return;
  }
}
