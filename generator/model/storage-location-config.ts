/** The `config` of a storage location, made the same way for the build's model and for `geoshelf add`'s remote reader. */
import type { StorageLocationModel } from '../../core/model.ts';
import type { StorageLocationRecord } from '../../schemas/records/storage-location-record.ts';

/** The `base_url` of a storage location that is the data folder, replaced by the storage base URL setting. */
export const STORAGE_PLACEHOLDER = '{storage_base_url}';

/**
 * A storage location's `config`: its `base_url` without trailing slashes (with `storageBaseUrl`, the placeholder
 * in it replaced by that address), its type, and its bucket and endpoint when it has them.
 * @example buildStorageLocationConfig(record, config.storageBaseUrl) // for the build; without it, `base_url` as written
 */
export function buildStorageLocationConfig(record: StorageLocationRecord, storageBaseUrl?: string): NonNullable<StorageLocationModel['config']> {
  const baseUrl = storageBaseUrl === undefined ? record.base_url : record.base_url.replace(STORAGE_PLACEHOLDER, storageBaseUrl);
  return {
    version: '1',
    base_url: baseUrl.replace(/\/+$/, ''),
    type: record.backend_type,
    ...(record.bucket ? { bucket: record.bucket } : {}),
    ...(record.endpoint_url ? { endpoint_url: record.endpoint_url } : {}),
  };
}
