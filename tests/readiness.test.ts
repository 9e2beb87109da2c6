import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadinessSchema, type Readiness } from '../schemas/discovery.ts';
import { createServer, type GeoshelfServer } from '../server/app.ts';
import { catalogSources, createReadinessMonitor, READINESS_LISTED } from '../server/readiness.ts';
import { get, linkSampleData, sampleConfig, sampleServer } from './helpers/sample.ts';

/** GET /api/health/ready, its body checked against the documented schema. */
async function ready(server: GeoshelfServer): Promise<{ response: Response; body: Readiness }> {
  const response = await get(server, '/api/health/ready');
  return { response, body: ReadinessSchema.parse(await response.json()) };
}

describe('readiness: /api/health/ready says whether the data folder holds what the catalog stores in it', () => {
  const folders: string[] = [];
  const servers: GeoshelfServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('answers 200 on the sample with its data, counting every source stored in the data folder', async () => {
    const server = sampleServer();
    servers.push(server);
    const { response, body } = await ready(server);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(body.status).toBe('ready');
    expect(body.unreachable).toEqual([]);
    // Every GeoParquet source of the sample is a local file the query service reads, so each is counted.
    const geoparquet = server.snapshot().context.index.model.collections.flatMap((collection) => collection.datasets.flatMap((dataset) => dataset.files))
      .flatMap((file) => file.formats).filter((link) => server.snapshot().context.index.formatsById.get(link.format_id)?.format_type === 'geoparquet').flatMap((link) => link.sources);
    expect(geoparquet.length).toBeGreaterThan(5);
    expect(body.sources.local).toBeGreaterThanOrEqual(geoparquet.length);
    expect(body.sources.unreachable).toBe(0);
  });

  describe('a replica started with an empty data folder', () => {
    let server: GeoshelfServer;
    const warnings: string[] = [];
    let emptyDir: string;
    beforeAll(async () => {
      emptyDir = await mkdtemp(join(tmpdir(), 'geoshelf-empty-data-'));
      folders.push(emptyDir);
      server = createServer({ config: { ...sampleConfig(), dataDir: emptyDir }, serveData: true, warn: (message) => warnings.push(message) });
      servers.push(server);
    });

    it('stays alive on /api/health but is not ready, naming the sources by id and public URL, with Retry-After', async () => {
      expect((await get(server, '/api/health')).status).toBe(200);
      const { response, body } = await ready(server);
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(body.status).toBe('not_ready');
      expect(body.sources.unreachable).toBe(body.sources.local);
      expect(body.unreachable).toHaveLength(Math.min(READINESS_LISTED, body.sources.local));
      const storage = server.snapshot().context.index.settings.storageBaseUrl;
      for (const source of body.unreachable) expect(source.url.startsWith(`${storage}/`)).toBe(true);
      // The server's own paths stay on the server.
      expect(JSON.stringify(body)).not.toContain(emptyDir);
      expect(JSON.stringify(body)).not.toContain(sampleConfig().dataDir);
    });

    it('answers HEAD with the same status and no body', async () => {
      const response = await Promise.resolve(server.fetch(new Request('http://localhost/api/health/ready', { method: 'HEAD' })));
      expect(response.status).toBe(503);
      expect(await response.text()).toBe('');
    });

    it('warns once, naming the folder and each source, not on every probe', async () => {
      await ready(server);
      await ready(server);
      const notReady = warnings.filter((warning) => warning.startsWith('not ready'));
      expect(notReady).toHaveLength(1);
      expect(notReady[0]).toContain(emptyDir);
      expect(notReady[0]).toMatch(/cannot be read/);
      const { body } = await ready(server);
      expect(notReady[0]).toContain(`source ${body.unreachable[0]!.source_id} `);
    });
  });

  it('names exactly the source whose file went missing, and is ready again once it is back', async () => {
    const dataDir = await linkSampleData();
    folders.push(dataDir);
    const server = sampleServer();
    servers.push(server);
    const index = server.snapshot().context.index;
    const { sources } = catalogSources(index, dataDir);
    const taken = sources.find((source) => source.url.endsWith('.parquet'))!;
    const takenPath = taken.probe;
    const warnings: string[] = [];
    const monitor = createReadinessMonitor(() => ({ index, buildId: 'one' }), dataDir, (message) => warnings.push(message));
    expect((await monitor.current()).status).toBe('ready');

    await rename(takenPath, `${takenPath}.away`);
    let answer = await monitor.check();
    expect(answer.status).toBe('not_ready');
    expect(answer.unreachable).toEqual([{ dataset_id: taken.dataset_id, file_id: taken.file_id, source_id: taken.source_id, url: taken.url }]);
    // Probes within the next few seconds get this answer without looking at every file again.
    expect(await monitor.current()).toEqual(answer);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(taken.url);

    await rename(`${takenPath}.away`, takenPath);
    answer = await monitor.check();
    expect(answer).toMatchObject({ status: 'ready', unreachable: [] });
  });
});
