import type { ModelFile } from '../../runtime/manifest.ts';
import type { CatalogModel } from '../../core/model.ts';

/** The model file's text, and the JSON of each dataset in it, which the render cache hashes. */
export interface SerializedModel {
  json: string;
  datasetJson: Map<number, string>;
}

/**
 * Serialises the model for `_geoshelf/model.json`, one dataset at a time, so the JSON of every dataset is at
 * hand for hashing without serialising the catalog twice. The result equals `JSON.stringify({settings, model})`.
 */
export function serializeModel(settings: ModelFile['settings'], model: CatalogModel): SerializedModel {
  const datasetJson = new Map<number, string>();
  const collections = model.collections.map((collection) => {
    const { datasets, ...header } = collection;
    const items = datasets.map((dataset) => {
      const json = JSON.stringify(dataset);
      datasetJson.set(dataset.id, json);
      return json;
    });
    const headerJson = JSON.stringify({ ...header, datasets: [] });
    return `${headerJson.slice(0, -3)}[${items.join(',')}]}`;
  });
  const json = `{"settings":${JSON.stringify(settings)},"model":{"formats":${JSON.stringify(model.formats)},"storageLocations":${JSON.stringify(model.storageLocations)},"collections":[${collections.join(',')}]}}`;
  return { json, datasetJson };
}
