import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishData } from '../deploy/publish-data.ts';
import { buildCatalog, loadCatalogModel } from '../generator/build.ts';
import { BuildError } from '../generator/errors.ts';
import type { CatalogModel, SourceModel } from '../core/model.ts';
import type { Config } from '../runtime/config.ts';
import { listSourceFiles } from '../runtime/source-files.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { post, sourceRef, TEST_KEYS } from './helpers/queries.ts';
import { startBucket, type TestBucket } from './helpers/bucket.ts';
import { makeTempDir } from './helpers/catalog.ts';
import { sampleInBucket, useBucketCredentials } from './helpers/remote.ts';
import { sampleConfig } from './helpers/sample.ts';

const BUCKET = 'sample-data';

/** Every source of a model by id, with its format's type. */
function sourcesOf(model: CatalogModel): Map<number, SourceModel & { formatType: string }> {
  const types = new Map(model.formats.map((format) => [format.id, format.format_type]));
  const sources = new Map<number, SourceModel & { formatType: string }>();
  for (const collection of model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        for (const link of file.formats) for (const source of link.sources) sources.set(source.id, { ...source, formatType: types.get(link.format_id)! });
      }
    }
  }
  return sources;
}

/** Loads a catalog's model; a failed build fails the test with every problem it found. */
async function load(config: Config, log?: (line: string) => void) {
  try {
    return await loadCatalogModel({ config, ...(log ? { log } : {}) });
  } catch (error) {
    if (error instanceof BuildError) throw new Error(error.issues.map((issue) => `${issue.code} ${issue.message}`).join('\n'));
    throw error;
  }
}

describe('the sample catalog with its data only in a bucket', () => {
  let bucket: TestBucket;
  let restore = () => undefined as void;
  beforeAll(async () => {
    bucket = await startBucket(BUCKET);
    restore = useBucketCredentials(bucket);
    // As a steward moves theirs: every file of the data folder, twins included, under the same paths.
    await publishData({ dataDir: sampleConfig().dataDir, target: `s3://${BUCKET}`, cacheMaxAge: 60, env: bucket.env, log: () => undefined });
  });
  afterAll(async () => {
    restore();
    await bucket?.stop();
  });

  it('builds the same file metadata, dictionaries, checksums and twins as the local build, and reads nothing again when nothing changed', async () => {
    const local = await load(sampleConfig());
    const config = await sampleInBucket(bucket, sampleConfig(), BUCKET);
    const lines: string[] = [];
    const remote = await load(config, (line) => lines.push(line));
    expect(lines.find((line) => line.includes('in object storage whole'))).toMatch(/^read \d+ files in object storage whole/);

    const mine = sourcesOf(local.model);
    const theirs = sourcesOf(remote.model);
    // Every source, the PMTiles twins among them: the bucket holds a current twin beside each GeoParquet file.
    expect([...theirs.keys()].sort()).toEqual([...mine.keys()].sort());
    expect([...theirs.values()].filter((source) => source.formatType === 'pmtiles').length).toBeGreaterThan(20);
    const formats = new Set<string>();
    for (const [id, source] of mine) {
      const other = theirs.get(id)!;
      formats.add(source.formatType);
      expect(other.metadata, `${source.formatType} ${source.location.type === 'file' ? source.location.path : id}`).toEqual(source.metadata);
      expect(other.stored, `${source.formatType} ${id}`).toEqual(source.stored);
      // The download is the bucket's public address.
      if (source.location.type === 'file') expect(other.url).toBe(`https://data.example.org/${BUCKET}/${source.location.path.split('/').map(encodeURIComponent).join('/')}`);
    }
    // Each format the sample has, the multi-file ones too, came out the same.
    expect([...formats].sort()).toEqual(['file_geodatabase', 'geojson', 'geopackage', 'geoparquet', 'pmtiles', 'shapefile']);
    expect(remote.warnings.filter((warning) => warning.includes('object storage'))).toEqual([]);

    lines.length = 0;
    const again = await load(config, (line) => lines.push(line));
    expect(lines.some((line) => line.includes('in object storage whole'))).toBe(false);
    expect(sourcesOf(again.model).get([...mine.keys()][0]!)?.metadata).toEqual(mine.get([...mine.keys()][0]!)?.metadata);
  }, 240_000);

  it('leaves out a twin the bucket does not hold current, and says which', async () => {
    const config = await sampleInBucket(bucket, sampleConfig(), BUCKET);
    const twin = 'geonames/national-capitals/3.1.0/national-capitals.pmtiles';
    const saved = await bucket.read(twin);
    expect(saved).toBeDefined();
    // Another file's twin in its place: made by geoshelf, but of other data.
    await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: twin, Body: await readFile(join(sampleConfig().dataDir, 'us-census/us-state-capitals/3.1.0/us-state-capitals.pmtiles')) }));
    try {
      const loaded = await load(config);
      const paths = [...sourcesOf(loaded.model).values()].map((source) => (source.location.type === 'file' ? source.location.path : ''));
      expect(paths).not.toContain(twin);
      expect(paths).toContain('geonames/national-capitals/3.1.0/national-capitals.parquet');
      expect(paths).toContain('us-census/us-state-capitals/3.1.0/us-state-capitals.pmtiles');
      expect(loaded.warnings.find((warning) => warning.includes('no current PMTiles twin'))).toContain(`s3://${BUCKET}/${twin} was made of other data`);
    } finally {
      await bucket.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: twin, Body: saved }));
    }
  }, 240_000);

  it('serves OGC items, queries and download-zip from a replica that holds no data file, as the local server does', async () => {
    const config = await sampleInBucket(bucket, sampleConfig(), BUCKET);
    await buildCatalog({ config });
    const remote = createServer({ config: { ...config, queryKeys: TEST_KEYS, remoteCacheDir: await makeTempDir() } });
    const local = createServer({ config: { ...sampleConfig(), queryKeys: TEST_KEYS }, serveData: true });
    const json = async (server: GeoshelfServer, path: string) => {
      const response = await server.fetch(new Request(`http://localhost${path}`));
      expect(response.status, path).toBe(200);
      return response.json() as Promise<Record<string, unknown>>;
    };
    try {
      expect(await readdir(config.dataDir)).toEqual([]);
      const ready = await remote.readiness.check();
      expect(ready.status).toBe('ready');
      expect(ready.sources.remote).toBeGreaterThan(50);
      expect(ready.sources.local).toBe(0);
      // Every feature collection, with its extent; and the same items, in the same order, with the same count.
      const collections = (await json(remote, '/features/collections')).collections as { id: string }[];
      expect(collections).toEqual((await json(local, '/features/collections')).collections);
      expect(collections.length).toBeGreaterThan(20);
      for (const { id } of collections.filter((_, index) => index % 6 === 0)) {
        const path = `/features/collections/${id}/items?limit=7`;
        const [theirs, mine] = [await json(remote, path), await json(local, path)];
        expect(theirs.features, id).toEqual(mine.features);
        expect(theirs.numberMatched, id).toBe(mine.numberMatched);
      }
      // Vector tiles read from the twin in the bucket, as the local server reads it from the data folder.
      const tileset = `/features/collections/geonames.megacities.megacities/tiles/WebMercatorQuad`;
      const [limit] = (await json(local, tileset)).tileMatrixSetLimits as { tileMatrix: string; minTileRow: number; minTileCol: number }[];
      const tiles = await Promise.all([remote, local].map(async (server) => {
        const response = await server.fetch(new Request(`http://localhost${tileset}/${limit!.tileMatrix}/${limit!.minTileRow}/${limit!.minTileCol}`));
        return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()) };
      }));
      expect(tiles[1]!.status).toBe(200);
      expect(tiles[1]!.bytes.length).toBeGreaterThan(0);
      expect(tiles[0]).toEqual(tiles[1]);

      const sql = 'SELECT name, population FROM c ORDER BY population DESC, name LIMIT 20';
      const answers = await Promise.all([remote, local].map(async (server) => {
        const response = await post(server, '/api/queries', { sql, sources: [sourceRef(server, 'c', 'geonames', 'cities', 'cities-15000')] });
        expect(response.status).toBe(200);
        return ((await response.json()) as { rows: unknown[] }).rows;
      }));
      expect(answers[0]).toHaveLength(20);
      expect(answers[0]).toEqual(answers[1]);
      // An agent's run_query goes through the same copies.
      const viaMcp = await Promise.all([remote, local].map(async (server) => {
        const response = await server.fetch(new Request('http://localhost/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_query', arguments: { sql, sources: [sourceRef(server, 'c', 'geonames', 'cities', 'cities-15000')] } } }),
        }));
        const body = await response.json() as { result: { isError?: boolean; structuredContent: { rows: unknown[] } } };
        expect(body.result.isError, JSON.stringify(body)).toBeFalsy();
        return body.result.structuredContent.rows;
      }));
      expect(viaMcp[0]).toEqual(answers[0]);
      expect(viaMcp[1]).toEqual(answers[0]);

      // A shapefile and a File Geodatabase: several objects each, listed in the bucket and zipped whole.
      const model = (await load(config)).model;
      for (const formatType of ['shapefile', 'file_geodatabase']) {
        const path = downloadZipPath(model, formatType);
        const [theirs, mine] = (await Promise.all([remote, local].map(async (server) => {
          const response = await server.fetch(new Request(`http://localhost${path}`));
          expect(response.status, path).toBe(200);
          return Buffer.from(await response.arrayBuffer());
        }))) as [Buffer, Buffer];
        // Stored entries of the same names and sizes: archives of one length, each file's bytes whole in both.
        expect(theirs.length, formatType).toBe(mine.length);
        const source = [...sourcesOf(model).values()].find((candidate) => candidate.formatType === formatType)!;
        const parts = listSourceFiles(sampleConfig().dataDir, source.location.type === 'file' ? source.location.path : '');
        expect(parts.length).toBeGreaterThan(2);
        for (const part of parts) {
          const bytes = await readFile(part.path);
          expect(theirs.indexOf(bytes.subarray(0, Math.min(bytes.length, 512))), part.name).toBeGreaterThan(0);
        }
      }
    } finally {
      await remote.close();
      await local.close();
    }
  }, 240_000);
});

/** The download-zip path of the first source of a format in a model. */
function downloadZipPath(model: CatalogModel, formatType: string): string {
  const types = new Map(model.formats.map((format) => [format.id, format.format_type]));
  for (const collection of model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        for (const link of file.formats) {
          if (types.get(link.format_id) !== formatType || link.sources.length === 0) continue;
          return `/api/collections/${collection.slug}/datasets/${dataset.slug}/files/${file.slug}/sources/${link.sources[0]!.id}/download-zip`;
        }
      }
    }
  }
  throw new Error(`the sample has no ${formatType} source`);
}
