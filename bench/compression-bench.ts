import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { COMPRESS_MIN_BYTES } from '../core/constants.ts';
import { readManifest } from '../runtime/manifest.ts';
import { COMPRESSION } from '../generator/build.ts';
import { compressBody } from '../generator/emit/compress.ts';
import type { BenchContext } from './run.ts';

/**
 * Brotli qualities and gzip levels on the documents of the synthetic catalog: time per document and bytes, so the
 * build's choice (DESIGN.md decision 7) rests on a measurement. The chosen pair is the baseline of the ratios.
 */
export async function benchCompression(bench: BenchContext): Promise<void> {
  bench.section('Compression of documents (choice of DESIGN.md decision 7)');
  const { distDir } = bench.kept('synthetic');
  const manifest = (await readManifest(distDir))!;
  const keys = Object.entries(manifest.files).filter(([, entry]) => entry.bytes >= COMPRESS_MIN_BYTES).map(([key]) => key);
  const sample = await Promise.all(keys.filter((_, index) => index % Math.ceil(keys.length / 2000) === 0).map((key) => readFile(join(distDir, key))));
  const measure = (settings: { brotliQuality: number; gzipLevel: number }) => {
    const started = performance.now();
    let br = 0;
    let gz = 0;
    for (const body of sample) {
      const result = compressBody(body, settings);
      br += result.br.length;
      gz += result.gz.length;
    }
    return { microseconds: ((performance.now() - started) * 1000) / sample.length, br, gz };
  };
  // The first pass only warms the JIT and zlib's allocations; every setting is measured after it.
  measure(COMPRESSION);
  const chosen = measure(COMPRESSION);
  const raw = sample.reduce((sum, body) => sum + body.length, 0);
  bench.report(`chosen: brotli ${COMPRESSION.brotliQuality} + gzip ${COMPRESSION.gzipLevel}`, `${chosen.microseconds.toFixed(0)} µs/document`, `brotli ${(chosen.br / raw * 100).toFixed(1)}%, gzip ${(chosen.gz / raw * 100).toFixed(1)}% of ${sample.length} documents, ${(raw / sample.length / 1024).toFixed(1)} KiB each`);
  for (const [brotliQuality, gzipLevel] of [[1, 6], [4, 6], [6, 6], [9, 6], [11, 6], [5, 1], [5, 9]] as const) {
    const other = measure({ brotliQuality, gzipLevel });
    bench.report(`brotli ${brotliQuality} + gzip ${gzipLevel}`, `${(other.microseconds / chosen.microseconds).toFixed(2)}× time`, `brotli ${(other.br / chosen.br).toFixed(3)}×, gzip ${(other.gz / chosen.gz).toFixed(3)}× the chosen bytes`);
  }
}
