import wasmUrl from 'parquet-wasm/esm/parquet_wasm_bg.wasm?url';
import { PreviewError } from './preview-error.ts';

/**
 * Downloads and compiles parquet-wasm's 5 MB wasm module. This module holds only the module's URL, so the file
 * page's entry imports it statically and starts at once: the download and the (streaming, off-thread)
 * compilation then overlap the loading of the reader's own chunk (parquet-wasm's glue and apache-arrow), and
 * `readPreview` takes the promise.
 * @throws PreviewError when the wasm file cannot be downloaded.
 */
export async function compileParquetWasm(): Promise<WebAssembly.Module> {
  const response = await fetch(wasmUrl);
  if (!response.ok) throw new PreviewError(`The preview's Parquet reader could not be downloaded (HTTP ${response.status}).`);
  // Streaming compilation wants the application/wasm type; a host that sends another gets the slower path.
  const streaming = response.headers.get('content-type')?.startsWith('application/wasm');
  return streaming ? WebAssembly.compileStreaming(response) : WebAssembly.compile(await response.arrayBuffer());
}
