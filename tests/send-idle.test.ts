import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryResultSchema } from '../schemas/query.ts';
import { startChildServer, type ChildServer } from './helpers/fuzz-server.ts';
import { sampleConfig } from './helpers/sample.ts';

/**
 * Streamed responses whose client stops taking bytes are cut (GEOSHELF_SEND_IDLE_TIMEOUT_MS), on `npm run serve`
 * over real sockets: a client that reads the headers and then nothing must not keep the server's file open (a
 * deleted temporary file, for a query download, which would fill the disk invisibly to `du`).
 */
const IDLE_MS = 2000;
/** A loaded 2-core machine may be slow to notice; the point is that the file is let go at all, not how soon. */
const MARGIN_MS = 15_000;

let server: ChildServer;
let dataDir = '';
/** What the cases download: a query result as GeoJSON (about 20 MB), a 21 MB data file, and a ZIP holding it. */
const targets = { query: '', data: '', zip: '' };
/** The real path of the data file, as /proc shows it. */
let dataFile = '';

beforeAll(async () => {
  const config = sampleConfig();
  dataDir = realpathSync(config.dataDir);
  server = await startChildServer(config, {
    env: { GEOSHELF_SEND_IDLE_TIMEOUT_MS: String(IDLE_MS), GEOSHELF_QUERY_DOWNLOAD_MAX_ROWS: '200000', GEOSHELF_QUERY_TIMEOUT_MS: '60000' },
  });
  const detail = await (await fetch(`${server.origin}/api/collections/geonames/datasets/cities/files/cities-1000`)).json() as FileDetail;
  const sources = detail.file.formats.flatMap((format) => format.sources);
  const parquet = sources.find((source) => source.location.path.endsWith('.parquet'))!;
  const pmtiles = sources.find((source) => source.location.path.endsWith('.pmtiles'))!;
  dataFile = join(dataDir, pmtiles.location.path);
  targets.data = `/data/${pmtiles.location.path}`;
  targets.zip = new URL(pmtiles.links.download_zip!).pathname;
  const ids = { collection_id: detail.collection.id, dataset_id: detail.dataset.id, file_id: detail.file.id, file_source_id: parquet.id };
  const created = await fetch(`${server.origin}/api/queries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sources: [{ alias: 'cities', ...ids }], sql: 'SELECT name, country, population, geometry FROM cities', limit: 1 }),
  });
  expect(created.status).toBe(200);
  const result = QueryResultSchema.parse(await created.json());
  targets.query = `/api/queries/${result.query_id}/download.geojson?token=${encodeURIComponent(result.query_token)}`;
}, 180_000);
afterAll(async () => {
  await server?.close();
});

/** The parts of the file metadata route's document that the cases read. */
interface FileDetail {
  collection: { id: number };
  dataset: { id: number };
  file: { id: number; formats: { sources: { id: number; location: { path: string }; links: { download_zip?: string } }[] }[] };
}

/** Where each case's open file shows in /proc/<pid>/fd: the download's deleted temporary file, or the data file. */
const holdsFile: Record<keyof typeof targets, (link: string) => boolean> = {
  query: (link) => link.includes('geoshelf-download-') && link.endsWith('(deleted)'),
  data: (link) => link === dataFile,
  zip: (link) => link === dataFile,
};

/** The targets of the server's open file descriptors. */
function openFiles(pid: number): string[] {
  const folder = `/proc/${pid}/fd`;
  return readdirSync(folder).flatMap((fd) => {
    try {
      return [readlinkSync(join(folder, fd))];
    } catch {
      return [];
    }
  });
}

async function waitFor(check: () => boolean, limitMs: number): Promise<number> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > limitMs) return Infinity;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return performance.now() - started;
}

/** A GET over a raw socket whose reader can stop and go on; the body bytes are counted, not kept. */
function openDownload(path: string): Promise<{
  status: number;
  contentLength: number;
  stop: () => void;
  readToEnd: (pauseEveryBytes?: number, pauseMs?: number) => Promise<number>;
  /** Hangs up, so that a failed case leaves nothing open for the next. */
  hangUp: () => void;
}> {
  const { hostname, port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let head = Buffer.alloc(0);
    let body = 0;
    let ended: Promise<void> | undefined;
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => undefined);
    socket.once('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`));
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onHead);
      const text = head.subarray(0, end).toString('latin1');
      body = head.length - end - 4;
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]);
      const contentLength = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? -1);
      resolve({
        status,
        contentLength,
        stop: () => socket.pause(),
        hangUp: () => socket.destroy(),
        readToEnd: (pauseEveryBytes = Infinity, pauseMs = 0) => {
          let sincePause = 0;
          socket.on('data', (data: Buffer) => {
            body += data.length;
            sincePause += data.length;
            if (sincePause < pauseEveryBytes) return;
            sincePause = 0;
            socket.pause();
            setTimeout(() => socket.resume(), pauseMs);
          });
          socket.resume();
          ended ??= closed;
          return ended.then(() => body);
        },
      });
    };
    socket.on('data', onHead);
    socket.once('close', () => reject(new Error(`the connection closed before the headers of ${path}`)));
  });
}

describe.each(Object.keys(targets) as (keyof typeof targets)[])('a %s download', (name) => {
  it(`whose client reads the headers and then nothing is cut within ${IDLE_MS} ms plus a margin, and its file let go`, async () => {
    const download = await openDownload(targets[name]);
    download.stop();
    try {
      expect(download.status).toBe(200);
      const held = () => openFiles(server.pid).some(holdsFile[name]);
      // The file is open while the response streams (the test would prove nothing otherwise).
      expect(await waitFor(held, 5000)).toBeLessThan(Infinity);
      const released = await waitFor(() => !held(), IDLE_MS + MARGIN_MS);
      expect(released, `the server still holds ${name}'s file ${IDLE_MS + MARGIN_MS} ms after its client stopped reading`).toBeLessThan(IDLE_MS + MARGIN_MS);
      const received = await download.readToEnd();
      expect(received).toBeLessThan(download.contentLength);
      expect(server.alive()).toBe(true);
    } finally {
      download.hangUp();
    }
  });

  it('is sent whole to a client that reads in bursts, pausing for less than the timeout, for longer than the timeout in all', async () => {
    const started = performance.now();
    const download = await openDownload(targets[name]);
    expect(download.status).toBe(200);
    const received = await download.readToEnd(2 * 1024 * 1024, IDLE_MS / 4);
    expect(received).toBe(download.contentLength);
    expect(performance.now() - started).toBeGreaterThan(IDLE_MS);
    expect(await waitFor(() => !openFiles(server.pid).some(holdsFile[name]), 5000)).toBeLessThan(Infinity);
  });
});
