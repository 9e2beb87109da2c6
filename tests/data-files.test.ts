import { beforeAll, describe, expect, it } from 'vitest';
import { parseRange } from '../server/byte-ranges.ts';
import { get, sampleServer } from './helpers/sample.ts';

const server = sampleServer();
const path = '/data/natural-earth/countries/2.0.2/countries-110m.parquet';
const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

describe('/data byte ranges', () => {
  let whole: Buffer;
  let etag: string;
  beforeAll(async () => {
    const response = await get(server, path);
    etag = response.headers.get('etag')!;
    whole = await bytesOf(response);
  });

  it('serves one range with its Content-Range', async () => {
    const response = await get(server, path, { range: 'bytes=4-11' });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes 4-11/${whole.length}`);
    expect((await bytesOf(response)).equals(whole.subarray(4, 12))).toBe(true);
  });

  it.each(['items=0-1', 'bytes=abc', 'bytes=-', 'bytes=9-2', 'bytes 0-1', 'bytes=0-1,4-5'])('ignores the Range %s and sends the whole file', async (range) => {
    const response = await get(server, path, { range });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-range')).toBeNull();
    expect((await bytesOf(response)).equals(whole)).toBe(true);
  });

  it.each([(size: number) => `bytes=${size}-`, (size: number) => `bytes=${size + 10}-${size + 20}`, () => 'bytes=-0'])('answers 416 with the file length to an unsatisfiable range (%#)', async (range) => {
    const response = await get(server, path, { range: range(whole.length) });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe(`bytes */${whole.length}`);
  });

  it.each(['"stale"', 'W/"stale"', 'Tue, 01 Jan 2030 00:00:00 GMT'])('sends the whole file when If-Range is %s, another version', async (ifRange) => {
    const response = await get(server, path, { range: 'bytes=0-3', 'if-range': ifRange });
    expect(response.status).toBe(200);
    expect((await bytesOf(response)).equals(whole)).toBe(true);
  });

  it('sends the range when If-Range names the file as it is', async () => {
    const response = await get(server, path, { range: 'bytes=0-3', 'if-range': etag });
    expect(response.status).toBe(206);
    expect((await bytesOf(response)).toString()).toBe('PAR1');
  });

  it('answers HEAD with the whole length, a Range notwithstanding', async () => {
    const response = await server.fetch(new Request(`http://localhost${path}`, { method: 'HEAD', headers: { range: 'bytes=0-3' } }));
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBe(whole.length);
    expect(await response.text()).toBe('');
  });
});

describe('reading a Range header', () => {
  it.each([
    ['bytes=0-9', 100, { kind: 'partial', range: { start: 0, end: 9 } }],
    ['bytes=90-', 100, { kind: 'partial', range: { start: 90, end: 99 } }],
    ['bytes=-10', 100, { kind: 'partial', range: { start: 90, end: 99 } }],
    ['bytes=-500', 100, { kind: 'partial', range: { start: 0, end: 99 } }],
    ['bytes=50-5000', 100, { kind: 'partial', range: { start: 50, end: 99 } }],
    ['BYTES=1-1', 100, { kind: 'partial', range: { start: 1, end: 1 } }],
    ['bytes=100-', 100, { kind: 'unsatisfiable' }],
    ['bytes=-0', 100, { kind: 'unsatisfiable' }],
    ['bytes=0-', 0, { kind: 'unsatisfiable' }],
    ['bytes=5-1', 100, { kind: 'whole' }],
    ['pages=1-2', 100, { kind: 'whole' }],
    ['bytes=1-2,5-6', 100, { kind: 'whole' }],
    ['bytes=one-two', 100, { kind: 'whole' }],
    [null, 100, { kind: 'whole' }],
  ] as const)('reads %s of %i bytes as %o', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});
