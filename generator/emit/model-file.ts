import { hash } from 'node:crypto';
import type { CatalogModel } from '../../core/model.ts';
import type { TreeFile } from '../../core/static-files.ts';
import { MODEL_FILE, type ModelFile } from '../../runtime/manifest.ts';
import { datasetPart, modelPartKey, type ModelRoot } from '../../runtime/model-file.ts';

/** The model files to write, keyed under `_geoshelf/`, and the SHA-256 of each dataset's JSON for the render cache. */
export interface SerializedModel {
  /** The parts whose bytes changed, then the root, always. */
  files: TreeFile[];
  /** Every part file the new root names, by key under `_geoshelf/`: any other one there is left over. */
  named: Set<string>;
  datasetHashes: Map<number, string>;
}

/**
 * Serialises the model for `_geoshelf/` (runtime/model-file.ts): each dataset once, hashed for the render cache,
 * and grouped into parts. A part whose datasets hash as they did in `previous` is kept without being put together
 * again; only the root and the parts that changed are returned to write.
 */
export function serializeModel(settings: ModelFile['settings'], model: CatalogModel, previous?: ModelRoot): SerializedModel {
  const datasetHashes = new Map<number, string>();
  const grouped = new Map<string, { id: number; json: string }[]>();
  for (const collection of model.collections) {
    for (const dataset of collection.datasets) {
      const json = JSON.stringify(dataset);
      datasetHashes.set(dataset.id, sha256(json));
      const part = datasetPart(dataset.id);
      if (!grouped.has(part)) grouped.set(part, []);
      grouped.get(part)!.push({ id: dataset.id, json });
    }
  }
  const files: TreeFile[] = [];
  const parts: ModelRoot['parts'] = {};
  for (const name of [...grouped.keys()].sort()) {
    const datasets = grouped.get(name)!.sort((a, b) => a.id - b.id);
    const inputs = sha256(datasets.map(({ id }) => `${id}\t${datasetHashes.get(id)}`).join('\n'));
    const before = previous && Object.hasOwn(previous.parts, name) ? previous.parts[name] : undefined;
    if (before?.inputs === inputs) {
      parts[name] = before;
      continue;
    }
    const body = Buffer.from(`{"datasets":[${datasets.map(({ json }) => json).join(',')}]}`);
    const ref = { sha256: sha256(body), bytes: body.length, inputs };
    parts[name] = ref;
    if (ref.sha256 !== before?.sha256) files.push({ key: modelPartKey(ref.sha256), body, type: 'application/json' });
  }
  const collections = model.collections.map(({ datasets, ...header }) => ({ ...header, datasets: datasets.map((dataset) => dataset.id) }));
  const root: ModelRoot = { format: 'geoshelf-model/2', settings, formats: model.formats, storageLocations: model.storageLocations, collections, parts };
  // Last: a tree is written in this order, so a reader never finds a root naming a part not there yet.
  files.push({ key: MODEL_FILE, body: Buffer.from(JSON.stringify(root)), type: 'application/json' });
  return { files, named: new Set(Object.values(parts).map((part) => modelPartKey(part.sha256))), datasetHashes };
}

function sha256(text: string | Uint8Array): string {
  return hash('sha256', text, 'hex');
}
