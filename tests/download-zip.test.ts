import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { promisify } from 'node:util';
import { serve } from 'srvx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createZipArchive } from '../server/download-zip.ts';
import { listSourceFiles } from '../runtime/source-files.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { get, sampleServer } from './helpers/sample.ts';

const server = sampleServer();
const file = '/api/collections/natural-earth/datasets/countries/files/countries-110m';
const hasUnzip = spawnSync('unzip', ['-v']).status === 0;
const hasOgrinfo = spawnSync('ogrinfo', ['--version']).status === 0;
const formats = hasOgrinfo ? execFileSync('ogrinfo', ['--formats'], { encoding: 'utf8' }) : '';
const drivers = new Set([...formats.matchAll(/^\s*(\S+(?: Shapefile)?) -/gm)].map((match) => match[1]!));
if (!hasUnzip) console.warn('download-zip: `unzip` is not on PATH, so the tests that unzip archives are skipped.');
if (!hasOgrinfo) console.warn('download-zip: `ogrinfo` is not on PATH (apt-get install gdal-bin), so the GDAL tests are skipped.');
else for (const driver of ['GeoJSON', 'Parquet', 'ESRI Shapefile', 'OpenFileGDB']) if (!drivers.has(driver)) console.warn(`download-zip: this GDAL has no ${driver} driver, so its GDAL test is skipped.`);

interface Source {
  id: number;
  version: string;
  url: string;
  location: { path: string };
  source_metadata: { feature_count?: number | null; geometry_type?: string | null; bounds?: number[] | null } | null;
  links: { download_zip: string };
}

async function listSources(): Promise<(Source & { format: string })[]> {
  const detail = await (await get(server, file)).json();
  return detail.file.formats.flatMap((link: { format: { format_type: string }; sources: Source[] }) => link.sources.map((source) => ({ ...source, format: link.format.format_type })));
}

const zipPath = (source: Source) => new URL(source.links.download_zip).pathname;
const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

function unzip(zip: Buffer, dir: string, ...args: string[]): Buffer {
  return execFileSync('unzip', [...args], { cwd: dir, input: zip, maxBuffer: 1 << 28 });
}

describe('download-zip', () => {
  let source: Source;
  let whole: Buffer;
  let etag: string;
  beforeAll(async () => {
    source = (await listSources())[0]!;
    const response = await get(server, zipPath(source));
    etag = response.headers.get('etag')!;
    whole = await bytesOf(response);
  });

  it('answers HEAD with the length of the GET body and no body', async () => {
    const head = await server.fetch(new Request(`http://localhost${zipPath(source)}`, { method: 'HEAD', headers: { range: 'bytes=0-9' } }));
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/zip');
    expect(Number(head.headers.get('content-length'))).toBe(whole.length);
    expect(head.headers.get('accept-ranges')).toBe('bytes');
    expect(head.headers.get('etag')).toBe(etag);
    expect(await head.text()).toBe('');
  });

  it.skipIf(!hasUnzip)('unzips to the exact bytes of the data file', async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, 'a.zip'), whole);
    const name = source.location.path.split('/').at(-1)!;
    expect(unzip(Buffer.alloc(0), dir, '-Z1', 'a.zip').toString().trim().split('\n')).toEqual([name]);
    const original = await bytesOf(await get(server, new URL(source.url).pathname));
    expect(unzip(Buffer.alloc(0), dir, '-p', 'a.zip', name).equals(original)).toBe(true);
    expect(spawnSync('unzip', ['-tq', 'a.zip'], { cwd: dir }).status).toBe(0);
  });

  it('is the same archive, byte for byte, on every request', async () => {
    expect((await bytesOf(await get(server, zipPath(source)))).equals(whole)).toBe(true);
  });

  it('gives each source of a file its own download file name and ETag', async () => {
    const sources = await listSources();
    const answers = await Promise.all(sources.map((each) => server.fetch(new Request(`http://localhost${zipPath(each)}`, { method: 'HEAD' }))));
    const names = answers.map((answer) => answer.headers.get('content-disposition'));
    expect(new Set(names).size).toBe(sources.length);
    expect(new Set(answers.map((answer) => answer.headers.get('etag'))).size).toBe(sources.length);
    expect(names).toContain(`attachment; filename="countries-countries-110m-geoparquet-2.0.2.zip"; filename*=UTF-8''countries-countries-110m-geoparquet-2.0.2.zip`);
    expect(names).toContain(`attachment; filename="countries-countries-110m-geoparquet-1.1.4.zip"; filename*=UTF-8''countries-countries-110m-geoparquet-1.1.4.zip`);
  });

  it('lets browsers cache it and read its download headers', async () => {
    const response = await server.fetch(new Request(`http://localhost${zipPath(source)}`, { method: 'HEAD' }));
    expect(response.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = response.headers.get('access-control-expose-headers')!.split(/, */).map((name) => name.toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['content-range', 'accept-ranges', 'content-length', 'etag', 'content-disposition']));
  });

  it('answers 304 to If-None-Match with its strong ETag, and 200 to another tag', async () => {
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    const again = await get(server, zipPath(source), { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await get(server, zipPath(source), { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it.each([
    ['the first local header', (size: number) => `bytes=0-29`, 0, 29],
    ['a stretch across the header into the data', () => 'bytes=20-120', 20, 120],
    ['a stretch inside the data', () => 'bytes=5000-9999', 5000, 9999],
    ['the data descriptor and central directory', (size: number) => `bytes=${size - 200}-`, -200, -1],
    ['the end record, as a suffix', () => 'bytes=-22', -22, -1],
    ['a range past the end, clamped', (size: number) => `bytes=${size - 10}-${size + 1000}`, -10, -1],
  ])('answers a range over %s with the same bytes as that slice of the whole archive', async (_, header, from, to) => {
    const start = from < 0 ? whole.length + from : from;
    const end = to < 0 ? whole.length + to : to;
    const response = await get(server, zipPath(source), { range: header(whole.length) });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/${whole.length}`);
    expect(Number(response.headers.get('content-length'))).toBe(end - start + 1);
    expect((await bytesOf(response)).equals(whole.subarray(start, end + 1))).toBe(true);
  });

  it.each(['bytes=abc', 'items=0-1', 'bytes=9-2', 'bytes=-', 'bytes=0-1,4-5'])('ignores the malformed or unsupported Range %s and sends the whole archive', async (range) => {
    const response = await get(server, zipPath(source), { range });
    expect(response.status).toBe(200);
    expect((await bytesOf(response)).equals(whole)).toBe(true);
  });

  it.each([(size: number) => `bytes=${size}-`, () => 'bytes=-0'])('answers 416 with the archive length to an unsatisfiable range (%#)', async (range) => {
    const response = await get(server, zipPath(source), { range: range(whole.length) });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe(`bytes */${whole.length}`);
  });

  it('sends the whole archive when If-Range names another version, and the range when it names this one', async () => {
    for (const stale of ['"stale"', `W/${etag}`, 'Tue, 01 Jan 2030 00:00:00 GMT']) {
      const response = await get(server, zipPath(source), { range: 'bytes=0-9', 'if-range': stale });
      expect(response.status).toBe(200);
      expect((await bytesOf(response)).equals(whole)).toBe(true);
    }
    const current = await get(server, zipPath(source), { range: 'bytes=0-9', 'if-range': etag });
    expect(current.status).toBe(206);
    expect((await bytesOf(current)).equals(whole.subarray(0, 10))).toBe(true);
  });

  it('answers 404 as a Problem for a source the file does not have', async () => {
    const response = await get(server, `${file}/sources/999999/download-zip`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });
});

describe('the files of a source', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir();
    await mkdir(join(dir, 'roads', 'parcels.gdb', 'index'), { recursive: true });
    const parts = { 'roads.shp': 900, 'roads.SHX': 120, 'roads.dbf': 3000, 'roads.prj': 0, 'roads.cpg': 5, 'roads.qmd': 10, 'roads-old.dbf': 7, 'readme.txt': 3 };
    for (const [name, size] of Object.entries(parts)) await writeFile(join(dir, 'roads', name), randomBytes(size));
    for (const name of ['a00000001.gdbtable', 'gdb', 'index/a00000001.spx']) await writeFile(join(dir, 'roads', 'parcels.gdb', name), randomBytes(64));
  });

  it.each([
    ['a shapefile is its .shp with the sidecars of the same stem', 'roads/roads.shp', ['roads.shp', 'roads.SHX', 'roads.dbf', 'roads.prj', 'roads.cpg']],
    ['a file geodatabase is every file of its folder', 'roads/parcels.gdb', ['parcels.gdb/a00000001.gdbtable', 'parcels.gdb/gdb', 'parcels.gdb/index/a00000001.spx']],
    ['any other file is itself', 'roads/readme.txt', ['readme.txt']],
    ['a missing file is nothing', 'roads/absent.parquet', []],
    ['a path out of the data folder is nothing', '../outside.txt', []],
  ])('%s', (_, path, names) => {
    expect(listSourceFiles(join(dir), path).map((entry) => entry.name)).toEqual(names);
  });

  it.skipIf(!hasUnzip)('zips a shapefile into one archive whose every range matches the whole', async () => {
    const entries = listSourceFiles(dir, 'roads/roads.shp');
    const archive = createZipArchive(entries, new Date('2024-05-01T12:00:00Z'), `"test-${Date.now()}"`);
    const whole = await buffer(archive.stream());
    expect(whole.length).toBe(archive.size);
    await writeFile(join(dir, 'roads.zip'), whole);
    for (const entry of entries) expect(unzip(Buffer.alloc(0), dir, '-p', 'roads.zip', entry.name).equals(await readFile(entry.path))).toBe(true);
    const cuts = [0, 1, 29, 30, 37, 38, 900, 1000, 1100, whole.length - 23, whole.length - 22, whole.length - 1];
    for (const start of cuts) {
      for (const end of cuts.filter((cut) => cut >= start)) {
        expect((await buffer(await archive.streamRange({ start, end }))).equals(whole.subarray(start, end + 1))).toBe(true);
      }
    }
  });
});

describe('GDAL', () => {
  let origin = '';
  let close: () => Promise<void> = async () => undefined;
  const answers: string[] = [];
  beforeAll(async () => {
    if (!hasOgrinfo) return;
    const fetch = async (request: Request) => {
      const response = await server.fetch(request);
      answers.push(`${request.method} ${response.status}`);
      return response;
    };
    const listening = serve({ fetch, port: 0, hostname: '127.0.0.1', silent: true });
    await listening.ready();
    origin = `http://127.0.0.1:${new URL(listening.url!).port}`;
    close = () => listening.close(true);
  });
  afterAll(() => close());

  // GDAL finds an archive in a path by its extension; a URL without `.zip` is wrapped in braces, or its last
  // segment is declared a zip extension.
  const paths = [
    ['braces', (url: string, entry: string) => `/vsizip/{/vsicurl/${url}}/${entry}`, {}],
    ['the download-zip extension declared', (url: string, entry: string) => `/vsizip//vsicurl/${url}/${entry}`, { CPL_VSIL_ZIP_ALLOWED_EXTENSIONS: 'download-zip' }],
  ] as const;
  for (const [format, driver] of [['geojson', 'GeoJSON'], ['geoparquet', 'Parquet']] as const) {
    it.skipIf(!drivers.has(driver)).each(paths)(`opens the ${format} archive in place by byte ranges (path with %s) and counts its features`, async (_, path, env) => {
      const source = (await listSources()).find((each) => each.format === format)!;
      const entry = source.location.path.split('/').at(-1)!;
      answers.length = 0;
      // Asynchronously: the server answering GDAL runs in this process.
      const { stdout } = await promisify(execFile)('ogrinfo', ['-ro', '-so', '-al', path(`${origin}${zipPath(source)}`, entry)], {
        env: { ...process.env, GDAL_HTTP_MAX_RETRY: '0', ...env },
      });
      expect(Number(/Feature Count: (\d+)/.exec(stdout)?.[1])).toBe(source.source_metadata!.feature_count);
      expect(answers).toContain('GET 206');
      expect(answers).not.toContain('GET 200');
    });
  }

  it.skipIf(!drivers.has('ESRI Shapefile'))('opens each sample shapefile in place from its download-zip, sidecars and all: count, type, CRS and UTF-8 names', async () => {
    const shapefiles = [
      { detail: file, type: 'Polygon', name: "Côte d'Ivoire" },
      { detail: '/api/collections/geonames/datasets/megacities/files/megacities', type: 'Point', name: 'São Paulo' },
    ];
    for (const { detail, type, name } of shapefiles) {
      const sources = (await (await get(server, detail)).json()).file.formats.flatMap((link: { format: { format_type: string }; sources: Source[] }) => link.sources.map((source) => ({ ...source, format: link.format.format_type })));
      const shapefile = sources.find((source: { format: string }) => source.format === 'shapefile')!;
      const geojson = sources.find((source: { format: string }) => source.format === 'geojson')!;
      const entry = shapefile.location.path.split('/').at(-1)!;
      const { stdout } = await promisify(execFile)('ogrinfo', ['-ro', '-al', '-geom=NO', `/vsizip/{/vsicurl/${origin}${zipPath(shapefile)}}/${entry}`], { env: { ...process.env, GDAL_HTTP_MAX_RETRY: '0' }, maxBuffer: 1 << 26 });
      // The count the catalog computed for the shapefile itself, and the GeoJSON's it was written from.
      expect(Number(/Feature Count: (\d+)/.exec(stdout)?.[1]), detail).toBe(shapefile.source_metadata!.feature_count);
      expect(shapefile.source_metadata!.feature_count).toBe(geojson.source_metadata!.feature_count);
      expect(stdout).toContain(`Geometry: ${type}`);
      expect(shapefile.source_metadata!.geometry_type).toContain(type);
      expect(stdout).toMatch(/GEOGCRS\["WGS 84"/);
      expect(stdout).toContain(name);
    }
  });
});

describe('the File Geodatabase', () => {
  let origin = '';
  let close: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    if (!hasOgrinfo) return;
    const listening = serve({ fetch: (request: Request) => server.fetch(request), port: 0, hostname: '127.0.0.1', silent: true });
    await listening.ready();
    origin = `http://127.0.0.1:${new URL(listening.url!).port}`;
    close = () => listening.close(true);
  });
  afterAll(() => close());

  it.skipIf(!drivers.has('OpenFileGDB'))('opens in place from its download-zip with the OpenFileGDB driver: the catalogued count, type and bounds', async () => {
    const source = (await listSources()).find((each) => each.format === 'file_geodatabase')!;
    const folder = source.location.path.split('/').at(-1)!;
    const { stdout } = await promisify(execFile)('ogrinfo', ['-ro', '-so', '-al', `/vsizip/{/vsicurl/${origin}${zipPath(source)}}/${folder}`], { env: { ...process.env, GDAL_HTTP_MAX_RETRY: '0' } });
    expect(stdout).toContain('using driver `OpenFileGDB\'');
    expect(stdout).toContain('Layer name: countries');
    expect(Number(/Feature Count: (\d+)/.exec(stdout)?.[1])).toBe(source.source_metadata!.feature_count);
    expect(stdout).toContain('Geometry: Multi Polygon');
    expect(source.source_metadata!.geometry_type).toBe('MultiPolygon');
    const extent = /Extent: \((\S+), (\S+)\) - \((\S+), (\S+)\)/.exec(stdout)!.slice(1).map(Number);
    extent.forEach((value, index) => expect(value).toBeCloseTo(source.source_metadata!.bounds![index]!, 4));
  });

  it.skipIf(!hasUnzip)('downloads as one archive of the .gdb folder, every file under the folder\'s name', async () => {
    const source = (await listSources()).find((each) => each.format === 'file_geodatabase')!;
    const dir = await makeTempDir();
    await writeFile(join(dir, 'a.zip'), await bytesOf(await get(server, zipPath(source))));
    const listing = unzip(Buffer.alloc(0), dir, '-Z1', 'a.zip').toString('utf8').trim().split('\n').sort();
    const onDisk = (await readdir(join(ROOT, 'catalog-data', 'data', source.location.path))).map((name) => `countries-110m.gdb/${name}`).sort();
    expect(listing).toEqual(onDisk);
    expect(listing).toContain('countries-110m.gdb/gdb');
  });
});

describe('shapefile archives', () => {
  it.skipIf(!hasUnzip)('hold the .shp with its .shx, .dbf, .prj and .cpg', async () => {
    const source = (await listSources()).find((each) => each.format === 'shapefile')!;
    const dir = await makeTempDir();
    const zip = await bytesOf(await get(server, zipPath(source)));
    await writeFile(join(dir, 'a.zip'), zip);
    const listing = unzip(Buffer.alloc(0), dir, '-Z1', 'a.zip').toString('utf8').trim().split('\n').sort();
    expect(listing).toEqual(['cpg', 'dbf', 'prj', 'shp', 'shx'].map((extension) => `countries-110m.${extension}`));
  });
});
