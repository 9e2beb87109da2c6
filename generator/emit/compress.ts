import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** The brotli and gzip forms of one body. */
export interface CompressResult {
  br: Uint8Array;
  gz: Uint8Array;
}

/** Compression settings of the precompressed siblings. */
export interface CompressSettings {
  brotliQuality: number;
  gzipLevel: number;
}

/** Compresses one body with brotli and gzip. */
export function compressBody(body: Uint8Array, settings: CompressSettings): CompressResult {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const br = brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: settings.brotliQuality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      // A window no larger than the document: the default 4 MiB window costs time for nothing on small files.
      [constants.BROTLI_PARAM_LGWIN]: Math.max(10, Math.min(24, Math.ceil(Math.log2(bytes.length + 1)))),
    },
  });
  return { br, gz: gzipSync(bytes, { level: settings.gzipLevel }) };
}
