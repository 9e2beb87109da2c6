import type { CollectionModel, DatasetModel } from '../../core/model.ts';
import type { RenderContext } from '../../core/api/catalog/resources.ts';
import { fileKeyForPath, serializeJson, type TreeFile } from '../../core/static-files.ts';
import {
  fileVersions, renderStacCollection, renderStacCollectionCatalog, renderStacItem, renderStacRoot, stacStaticPath,
  STAC_ITEM_TYPE, STAC_JSON_TYPE, type StacFileRef,
} from '../../core/api/stac/documents.ts';

/**
 * The static STAC tree, split by the scopes of `renderTree` so that an edit rewrites only what it touches:
 * the root in the global scope, a collection's Catalog in its collection scope, and a dataset's Collection
 * and Items (every version) in its dataset scope. Each document is `<path>/index.json`, as the server and the
 * edge rule map clean URLs.
 */

/** The root Catalog. */
export function stacGlobalFiles(context: RenderContext): TreeFile[] {
  return [stacFile(stacStaticPath(), renderStacRoot(context), STAC_JSON_TYPE)];
}

/** The Catalog of one geoshelf collection. */
export function stacCollectionFiles(context: RenderContext, collection: CollectionModel): TreeFile[] {
  return [stacFile(stacStaticPath(collection), renderStacCollectionCatalog(context, collection), STAC_JSON_TYPE)];
}

/**
 * The Collection of a dataset, the latest Item of each file at the file's path, and the Item of each older
 * version under `versions/`. The latest version has no copy there: nothing links it, and at 10,000 datasets the
 * copies were 30,000 more files in every build's manifest.
 */
export function stacDatasetFiles(context: RenderContext, collection: CollectionModel, dataset: DatasetModel): TreeFile[] {
  const files = [stacFile(stacStaticPath(collection, dataset), renderStacCollection(context, collection, dataset, 'static'), STAC_JSON_TYPE)];
  for (const file of dataset.files) {
    const ref: StacFileRef = { collection, dataset, file };
    fileVersions(context.index, file).forEach((version, position) => {
      const path = position === 0 ? stacStaticPath(collection, dataset, file) : stacStaticPath(collection, dataset, file, version);
      files.push(stacFile(path, renderStacItem(context, ref, version, 'static'), STAC_ITEM_TYPE));
    });
  }
  return files;
}

function stacFile(path: string, document: unknown, type: string): TreeFile {
  return { key: stacKey(path), body: serializeJson(document), type };
}

/**
 * The file key of a STAC path, found as the server and the edge rule find it: from the decoded path. Slugs and
 * versions (one segment, never `.` or `..`: the record schema checks) always give one. A version that looks
 * like a file name (`2.0.2`) is stored under that name rather than as `index.json`, as `fileKeyForPath` says.
 */
function stacKey(path: string): string {
  const key = fileKeyForPath(decodeURIComponent(path));
  if (key === undefined) throw new Error(`no static-tree key for ${path}`);
  return key;
}
