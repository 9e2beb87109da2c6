import { open } from 'node:fs/promises';
import type { RangeResponse, Source } from 'pmtiles';

/**
 * The `pmtiles` package's reader over a local file: it asks for byte ranges, as a browser does over HTTP. The build
 * draws map pictures through it, and tests read archives with it.
 * @example const archive = new PMTiles(new PmTilesFileSource('cities.pmtiles')); await archive.getZxy(0, 0, 0);
 */
export class PmTilesFileSource implements Source {
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
