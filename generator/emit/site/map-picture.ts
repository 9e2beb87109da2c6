/**
 * The file page's first map, drawn by the build as an SVG picture: the site's Natural Earth basemap, the file's
 * extent, and every feature of the version shown as its PMTiles twin draws them at the picture's zoom, framed as the
 * live map frames them (src/client/map/create-map.ts), in the live map's colours. The page shows it at once and
 * starts MapLibre only when a person asks, so the map costs the page's main thread nothing while it is read.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { PMTiles } from 'pmtiles';
import { PmTilesFileSource } from '../../../runtime/pmtiles-file-source.ts';
import { MAP_COLORS } from '../../../src/client/map/map-style.ts';
import { MAP_PICTURE_SIZE } from '../../../src/map-picture-size.ts';

/** MapLibre draws the world this many pixels wide at zoom 0 (vector tiles are 512-pixel tiles). */
const WORLD_PIXELS = 512;
/** What the live map uses: a point is shown at this zoom, a box is fitted with this margin, never past MAX_FIT_ZOOM. */
const POINT_ZOOM = 9;
const MAX_FIT_ZOOM = 14;
const PADDING = 24;
/** Web Mercator stops at this latitude. */
const MAX_LATITUDE = 85.0511;
/** A box narrower and lower than this (degrees) is a point, as on the live map. */
const POINT_SPAN = 1e-4;
/** What the live map frames for a file without bounds: the inhabited world. */
const WORLD_FRAME: Bounds = [-180, -62, 180, 82];
/** A picture draws at most this many features, so a dense archive cannot make a heavy page. */
const MAX_FEATURES = 20_000;

type Bounds = [number, number, number, number];
type Point = [number, number];

/** The land and borders of the site's basemap (public/basemap), read once per build. */
export interface Basemap {
  land: Point[][][];
  borders: Point[][];
}

/** Reads the basemap's land polygons and border lines. */
export async function readBasemap(folder: string): Promise<Basemap> {
  const read = async (name: string) => JSON.parse(await readFile(join(folder, name), 'utf8')) as { features: { geometry: { type: string; coordinates: unknown } }[] };
  const land = (await read('land.geojson')).features.flatMap(({ geometry }) => (geometry.type === 'Polygon' ? [geometry.coordinates as Point[][]] : geometry.type === 'MultiPolygon' ? (geometry.coordinates as Point[][][]) : []));
  const borders = (await read('borders.geojson')).features.flatMap(({ geometry }) => (geometry.type === 'LineString' ? [geometry.coordinates as Point[]] : geometry.type === 'MultiLineString' ? (geometry.coordinates as Point[][]) : []));
  return { land, borders };
}

/** What a picture shows: the file's extent and, when it has one, its PMTiles archive on disk. */
export interface MapPictureInput {
  bounds: Bounds | null;
  /** Local path of the file's PMTiles archive; null draws the extent alone. */
  archivePath: string | null;
}

/** The camera of the picture: zoom, and the left and top of the view in world pixels at that zoom. */
interface View {
  zoom: number;
  worldSize: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * The SVG picture of a file's map. An archive that cannot be read leaves the extent alone on the picture: the build
 * already checked every archive, and the live map says why it fails.
 */
export async function drawMapPicture(input: MapPictureInput, basemap: Basemap): Promise<string> {
  const view = frameView(input.bounds, MAP_PICTURE_SIZE.width, MAP_PICTURE_SIZE.height);
  const data = input.archivePath ? await drawArchive(input.archivePath, view).catch(() => null) : null;
  const { width, height } = view;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
    `<rect width="${width}" height="${height}" fill="${MAP_COLORS.water}"/>`,
    pathElement(basemap.land.flatMap((polygon) => copiesOf(view, polygon.flat()).map((offset) => ringsPath(polygon, view, offset, true))).join(''), `fill="${MAP_COLORS.land}" fill-rule="evenodd"`),
    pathElement(basemap.borders.flatMap((line) => copiesOf(view, line).map((offset) => ringsPath([line], view, offset, false))).join(''), `fill="none" stroke="${MAP_COLORS.border}" stroke-width="0.75"`),
    data ?? '',
    drawExtent(input.bounds, view),
    '</svg>',
  ];
  return parts.join('');
}

/**
 * The live map's frame for bounds: a box fitted with a margin (east unwrapped past 180° when it crosses the
 * antimeridian), a point at a town's zoom, and never zoomed out past one world as wide as the picture.
 */
export function frameView(bounds: Bounds | null, width: number, height: number): View {
  const [west, south, east, north] = bounds && isValid(bounds) ? bounds : WORLD_FRAME;
  const unwrappedEast = west > east ? east + 360 : east;
  const [x0, x1] = [lonToX(west), lonToX(unwrappedEast)];
  const [y0, y1] = [latToY(clampLatitude(north)), latToY(clampLatitude(south))];
  const isPoint = unwrappedEast - west < POINT_SPAN && north - south < POINT_SPAN;
  const fitted = isPoint ? POINT_ZOOM : Math.min(MAX_FIT_ZOOM, Math.log2((width - 2 * PADDING) / Math.max(x1 - x0, 1e-9)), Math.log2((height - 2 * PADDING) / Math.max(y1 - y0, 1e-9)));
  const zoom = Math.max(fitted, Math.log2(width / WORLD_PIXELS));
  const worldSize = WORLD_PIXELS * 2 ** zoom;
  const scale = 2 ** zoom;
  const centerY = Math.min(Math.max(((y0 + y1) / 2) * scale, height / 2), worldSize - height / 2);
  return { zoom, worldSize, left: ((x0 + x1) / 2) * scale - width / 2, top: centerY - height / 2, width, height };
}

function isValid([west, south, east, north]: Bounds): boolean {
  return [west, south, east, north].every(Number.isFinite) && south <= north && south >= -90 && north <= 90 && Math.abs(west) <= 180 && Math.abs(east) <= 180;
}

function clampLatitude(latitude: number): number {
  return Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, latitude));
}

/** Longitude to x in world pixels at zoom 0. */
function lonToX(longitude: number): number {
  return ((longitude + 180) / 360) * WORLD_PIXELS;
}

/** Latitude to y in world pixels at zoom 0 (Web Mercator). */
function latToY(latitude: number): number {
  const sin = Math.sin((clampLatitude(latitude) * Math.PI) / 180);
  return (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * WORLD_PIXELS;
}

/** The world copies (offsets in world pixels) in which some of these positions' box meets the view. */
function copiesOf(view: View, positions: Point[]): number[] {
  if (positions.length === 0) return [];
  let [minX, maxX, minY, maxY] = [Infinity, -Infinity, Infinity, -Infinity];
  const scale = view.worldSize / WORLD_PIXELS;
  for (const [lon, lat] of positions) {
    const [x, y] = [lonToX(lon) * scale, latToY(lat) * scale];
    [minX, maxX, minY, maxY] = [Math.min(minX, x), Math.max(maxX, x), Math.min(minY, y), Math.max(maxY, y)];
  }
  if (maxY < view.top || minY > view.top + view.height) return [];
  return [-1, 0, 1].map((copy) => copy * view.worldSize).filter((offset) => maxX + offset >= view.left && minX + offset <= view.left + view.width);
}

/** Rings or lines of longitude/latitude positions as SVG path data in picture pixels, repeated points dropped. */
function ringsPath(rings: Point[][], view: View, offset: number, close: boolean): string {
  const scale = view.worldSize / WORLD_PIXELS;
  return rings.map((ring) => pixelPath(ring.map(([lon, lat]): Point => [lonToX(lon) * scale + offset - view.left, latToY(lat) * scale - view.top]), close)).join('');
}

/**
 * Path data of one ring or line in picture pixels: simplified to half a pixel (Douglas–Peucker), rounded to whole
 * pixels (the picture is shown at most at its size), repeated points dropped. A 1:10m coastline otherwise keeps a
 * vertex for every pixel it passes.
 */
function pixelPath(points: Point[], close: boolean): string {
  const kept: string[] = [];
  let previous = '';
  for (const [x, y] of simplify(points, SIMPLIFY_PIXELS)) {
    const text = `${round(x)} ${round(y)}`;
    if (text !== previous) kept.push(text);
    previous = text;
  }
  if (kept.length < (close ? 3 : 2)) return '';
  return `M${kept.join('L')}${close ? 'Z' : ''}`;
}

/** How far, in picture pixels, a simplified line may stray from the original. */
const SIMPLIFY_PIXELS = 1;

/** Douglas–Peucker: the points a line keeps when none left out lies farther than `tolerance` from it. */
function simplify(points: Point[], tolerance: number): Point[] {
  if (points.length <= 2) return points;
  const keep = new Uint8Array(points.length);
  keep[0] = keep[points.length - 1] = 1;
  const stack: [number, number][] = [[0, points.length - 1]];
  while (stack.length > 0) {
    const [first, last] = stack.pop()!;
    let farthest = -1;
    let distance = tolerance * tolerance;
    for (let index = first + 1; index < last; index++) {
      const squared = squaredSegmentDistance(points[index]!, points[first]!, points[last]!);
      if (squared > distance) [farthest, distance] = [index, squared];
    }
    if (farthest < 0) continue;
    keep[farthest] = 1;
    stack.push([first, farthest], [farthest, last]);
  }
  return points.filter((_, index) => keep[index] === 1);
}

/** Squared distance from `point` to the segment from `a` to `b`. */
function squaredSegmentDistance([x, y]: Point, [ax, ay]: Point, [bx, by]: Point): number {
  const [dx, dy] = [bx - ax, by - ay];
  const length = dx * dx + dy * dy;
  const t = length === 0 ? 0 : Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / length));
  const [px, py] = [ax + t * dx - x, ay + t * dy - y];
  return px * px + py * py;
}

function round(value: number): string {
  return String(Math.round(value));
}

function pathElement(data: string, attributes: string): string {
  return data ? `<path d="${data}" ${attributes}/>` : '';
}

/** The extent as the live map draws it: a dashed box, or a ring around a point. */
function drawExtent(bounds: Bounds | null, view: View): string {
  if (!bounds || !isValid(bounds)) return '';
  const [west, south, east, north] = bounds;
  const scale = view.worldSize / WORLD_PIXELS;
  const unwrappedEast = west > east ? east + 360 : east;
  const [x0, x1] = [lonToX(west) * scale - view.left, lonToX(unwrappedEast) * scale - view.left];
  const [y0, y1] = [latToY(north) * scale - view.top, latToY(south) * scale - view.top];
  const stroke = `fill="none" stroke="${MAP_COLORS.extent}" stroke-width="2"`;
  if (unwrappedEast - west < POINT_SPAN && north - south < POINT_SPAN) return `<circle cx="${round(x0)}" cy="${round(y0)}" r="9" ${stroke}/>`;
  return `<path d="${pixelPath([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], true)}" ${stroke} stroke-dasharray="6 4"/>`;
}

/**
 * Every feature of the archive's tiles in view, at the tile zoom the live map would load (vector tiles are drawn
 * 512 pixels wide, so zoom 2.6 shows zoom-2 tiles), each tile clipped to its square so polygons' buffers do not
 * draw seams.
 */
async function drawArchive(path: string, view: View): Promise<string> {
  const archive = new PMTiles(new PmTilesFileSource(path));
  const header = await archive.getHeader();
  const tileZoom = Math.max(header.minZoom, Math.min(header.maxZoom, Math.floor(view.zoom)));
  const tiles = 2 ** tileZoom;
  const tilePixels = view.worldSize / tiles;
  // The tiles that overlap the view; one whose edge only touches it is left out.
  const [firstX, lastX] = [Math.floor(view.left / tilePixels), Math.ceil((view.left + view.width) / tilePixels) - 1];
  const [firstY, lastY] = [Math.max(0, Math.floor(view.top / tilePixels)), Math.min(tiles - 1, Math.ceil((view.top + view.height) / tilePixels) - 1)];
  const clips: string[] = [];
  const polygons: string[] = [];
  const lines: string[] = [];
  const points = new Set<string>();
  let features = 0;
  for (let x = firstX; x <= lastX; x++) {
    for (let y = firstY; y <= lastY; y++) {
      const answer = await archive.getZxy(tileZoom, ((x % tiles) + tiles) % tiles, y);
      if (!answer) continue;
      const [left, top] = [x * tilePixels - view.left, y * tilePixels - view.top];
      const clip = `t${clips.length}`;
      clips.push(`<clipPath id="${clip}"><rect x="${round(left)}" y="${round(top)}" width="${round(tilePixels)}" height="${round(tilePixels)}"/></clipPath>`);
      const tilePolygons: string[] = [];
      const tileLines: string[] = [];
      for (const layer of Object.values(new VectorTile(new PbfReader(new Uint8Array(answer.data))).layers)) {
        const unit = tilePixels / layer.extent;
        for (let index = 0; index < layer.length && features < MAX_FEATURES; index++, features++) {
          const feature = layer.feature(index);
          const rings = feature.loadGeometry().map((ring) => ring.map((point): Point => [left + point.x * unit, top + point.y * unit]));
          if (feature.type === 1) {
            for (const [px, py] of rings.flat()) if (px >= -8 && py >= -8 && px <= view.width + 8 && py <= view.height + 8) points.add(`M${round(px)} ${round(py)}h0`);
          } else {
            const data = rings.map((ring) => pixelPath(ring, feature.type === 3)).join('');
            (feature.type === 3 ? tilePolygons : tileLines).push(data);
          }
        }
      }
      if (tilePolygons.length) polygons.push(`<g clip-path="url(#${clip})">${pathElement(tilePolygons.join(''), `fill="${MAP_COLORS.data}" fill-opacity="0.22" fill-rule="evenodd" stroke="${MAP_COLORS.data}" stroke-width="1.5"`)}</g>`);
      if (tileLines.length) lines.push(`<g clip-path="url(#${clip})">${pathElement(tileLines.join(''), `fill="none" stroke="${MAP_COLORS.data}" stroke-width="2.5"`)}</g>`);
    }
  }
  // Points as the live map's circles: radius 5 in the data colour over a 1.5-pixel white halo, as round caps of empty lines.
  const dots = [...points].join('');
  const pointLayers = dots ? `${pathElement(dots, `stroke="${MAP_COLORS.halo}" stroke-width="13" stroke-linecap="round"`)}${pathElement(dots, `stroke="${MAP_COLORS.data}" stroke-width="10" stroke-linecap="round"`)}` : '';
  return `${clips.length ? `<defs>${clips.join('')}</defs>` : ''}${polygons.join('')}${lines.join('')}${pointLayers}`;
}

