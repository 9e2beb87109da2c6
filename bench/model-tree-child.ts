/**
 * A tree that holds only what the server needs to compute answers: the model (`_geoshelf/`) of a synthetic
 * catalog and a manifest with no files, for `npm run bench -- server-scale`. The server's STAC search, its
 * /api answers and its memory for the model do not read the prebuilt files, and the whole tree of 100k × 3 would be
 * about 44 GB. With `edit`, changes one dataset's description in the tree as a one-edit rebuild does for the
 * server: one model part and the model root rewritten, then `manifest.json`, which a running server watches.
 * @example node --max-old-space-size=16000 bench/model-tree-child.ts write /tmp/catalog data/ /tmp/dist
 * @example node bench/model-tree-child.ts edit /tmp/dist 4243 "Edited."
 */
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { INTERNAL_DIR } from '../core/constants.ts';
import type { DatasetModel } from '../core/model.ts';
import { loadCatalogModel } from '../generator/build.ts';
import { serializeModel } from '../generator/emit/model-file.ts';
import { writeTree } from '../generator/emit/write-tree.ts';
import { MODEL_FILE } from '../runtime/manifest.ts';
import { datasetPart, modelPartKey, readModelRoot } from '../runtime/model-file.ts';
import { benchConfig } from './build-bench.ts';

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'write') {
  const [catalogDir, dataDir, distDir] = rest as [string, string, string];
  const config = { ...benchConfig(join(distDir, '..'), catalogDir, dataDir), distDir };
  const { model } = await loadCatalogModel({ config });
  const serialized = serializeModel({ baseUrl: config.baseUrl, storageBaseUrl: config.storageBaseUrl }, model);
  await writeTree({ files: [], parts: new Map(), dropped: new Map(), fingerprint: 'bench' }, {
    distDir, settings: { base_url: config.baseUrl, storage_base_url: config.storageBaseUrl }, internal: serialized.files,
    threads: 1, brotliQuality: 5, gzipLevel: 6, incremental: false,
  });
} else if (mode === 'edit') {
  const [distDir, id, description] = rest as [string, string, string];
  const root = readModelRoot(distDir)!;
  const name = datasetPart(Number(id));
  const { datasets } = JSON.parse(readFileSync(join(distDir, INTERNAL_DIR, modelPartKey(root.parts[name]!.sha256)), 'utf8')) as { datasets: DatasetModel[] };
  datasets.find((dataset) => dataset.id === Number(id))!.description = description;
  const collections = root.collections.map((collection) => ({ ...collection, datasets: [] as DatasetModel[] }));
  collections[0]!.datasets = datasets;
  // serializeModel with the previous root rewrites only the part whose datasets changed; the root keeps the rest.
  const serialized = serializeModel(root.settings, { formats: root.formats, storageLocations: root.storageLocations, collections }, root);
  const part = serialized.files.find((file) => file.key !== MODEL_FILE)!;
  await writeFile(join(distDir, INTERNAL_DIR, part.key), part.body);
  const written = JSON.parse(Buffer.from(serialized.files.find((file) => file.key === MODEL_FILE)!.body).toString('utf8')) as typeof root;
  const next = { ...root, parts: { ...root.parts, [name]: written.parts[name]! } };
  await writeFile(join(distDir, INTERNAL_DIR, `${MODEL_FILE}.part`), JSON.stringify(next));
  await rename(join(distDir, INTERNAL_DIR, `${MODEL_FILE}.part`), join(distDir, INTERNAL_DIR, MODEL_FILE));
  const manifest = readFileSync(join(distDir, 'manifest.json'));
  await writeFile(join(distDir, 'manifest.json.part'), manifest);
  await rename(join(distDir, 'manifest.json.part'), join(distDir, 'manifest.json'));
} else {
  throw new Error('usage: model-tree-child.ts write <catalog> <data> <dist> | edit <dist> <dataset id> <description>');
}
