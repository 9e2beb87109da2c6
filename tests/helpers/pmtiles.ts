import { open } from 'node:fs/promises';
import type { RangeResponse, Source } from 'pmtiles';

/** The `pmtiles` package's reader over a local file: it asks for byte ranges, as a client over HTTP does. */
export class LocalSource implements Source {
  readonly #path: string;
  constructor(path: string) {
    this.#path = path;
  }
  getKey(): string {
    return this.#path;
  }
  async getBytes(offset: number, length: number): Promise<RangeResponse> {
    const file = await open(this.#path, 'r');
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await file.read(buffer, 0, length, offset);
      return { data: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + bytesRead) as ArrayBuffer };
    } finally {
      await file.close();
    }
  }
}

/** The Web Mercator tile [x, y] holding a longitude/latitude at zoom z. */
export function tileOf(lon: number, lat: number, z: number): [number, number] {
  const n = 2 ** z;
  const rad = (lat * Math.PI) / 180;
  return [Math.floor(((lon + 180) / 360) * n), Math.floor(((1 - Math.log(Math.tan(rad) + 1 / Math.cos(rad)) / Math.PI) / 2) * n)];
}
