/**
 * The remote half of `geoshelf add`: PATHs that are `s3://bucket/prefix` keys or `https://` URLs. Each names its
 * storage location, an existing one of the catalog (the same bucket, or a `base_url` the URL starts with) or a
 * new one written to `storage-locations.yaml`; a prefix is listed through the S3 API (HTTP cannot list, so a URL
 * names one file). The files found are described as the build reads them (`generator/enrich/remote-whole.ts`).
 */
import type { StorageLocationModel } from '../../core/model.ts';
import type { StorageLocationRecord } from '../../schemas/records/storage-location-record.ts';
import { listRemoteObjects, openRemoteObject, RemoteReadError } from '../../runtime/remote-object.ts';
import { buildStorageLocationConfig, STORAGE_PLACEHOLDER } from '../model/storage-location-config.ts';
import { slugOf, uniqueSlug } from './slugs.ts';

/** A storage location a remote PATH is in: its slug, what the reader needs of it, and its record when it is new. */
export interface RemoteLocation {
  slug: string;
  model: StorageLocationModel;
  /** The record to append to `storage-locations.yaml`, when the catalog has no location for it yet. */
  added?: StorageLocationRecord;
}

/** An object (or a File Geodatabase's folder) a remote PATH holds, by its path inside its location. */
export interface RemoteEntry {
  path: string;
  modified: Date;
}

/**
 * The storage location of a remote PATH and the path inside it: for `s3://bucket/key` the location of that bucket
 * (new: its `base_url` the bucket's address at the endpoint of AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else at AWS,
 * and that endpoint), for a URL the HTTP location whose `base_url` it starts with (new: its folder). `taken` holds
 * the slugs in use, and gets the new one.
 */
export function locateRemotePath(path: string, records: StorageLocationRecord[], taken: Set<string>, env: NodeJS.ProcessEnv): { location: RemoteLocation; key: string } {
  const s3 = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(path);
  if (s3) {
    const [, bucket, key] = s3 as unknown as [string, string, string];
    const existing = records.find((record) => record.backend_type === 's3' && record.bucket === bucket);
    if (existing) return { location: fromRecord(existing), key };
    const endpoint = (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || '').replace(/\/+$/, '');
    const added: StorageLocationRecord = {
      slug: uniqueSlug(slugOf(bucket), taken), name: `Bucket ${bucket}`, backend_type: 's3',
      base_url: endpoint ? `${endpoint}/${bucket}` : `https://${bucket}.s3.amazonaws.com`, bucket, ...(endpoint ? { endpoint_url: endpoint } : {}),
    };
    taken.add(added.slug);
    return { location: { ...fromRecord(added), added }, key };
  }
  let url: URL;
  try {
    url = new URL(path);
  } catch {
    throw new RemoteReadError(`${path} is not a URL`);
  }
  const address = `${url.origin}${url.pathname}`;
  const existing = records
    .filter((record) => record.backend_type === 'http' && !record.base_url.includes(STORAGE_PLACEHOLDER) && address.startsWith(`${record.base_url.replace(/\/+$/, '')}/`))
    .sort((a, b) => b.base_url.length - a.base_url.length)[0];
  const base = existing ? existing.base_url.replace(/\/+$/, '') : address.slice(0, address.lastIndexOf('/'));
  const key = address.slice(base.length + 1).split('/').map(decodeURIComponent).join('/');
  if (existing) return { location: fromRecord(existing), key };
  const added: StorageLocationRecord = { slug: uniqueSlug(slugOf(url.hostname), taken), name: url.hostname, backend_type: 'http', base_url: base };
  taken.add(added.slug);
  return { location: { ...fromRecord(added), added }, key };
}

/**
 * The objects a remote PATH names: the object at `key`, or every object under the folder `key` (S3 only); a
 * File Geodatabase's objects as its folder. Throws `RemoteReadError` when there is nothing there.
 */
export async function listRemoteEntries(location: RemoteLocation, key: string, where: string, env: NodeJS.ProcessEnv): Promise<RemoteEntry[]> {
  if (location.model.backend_type !== 's3') {
    if (key === '' || key.endsWith('/')) throw new RemoteReadError(`${where} is a folder, which cannot be listed over HTTP: name its files, or add it as s3://bucket/prefix`);
    const version = await openRemoteObject(location.model, key, env).head();
    return [{ path: key, modified: new Date(version.lastModified || 0) }];
  }
  const listed = await listRemoteObjects(location.model, key, env);
  const exact = listed.find((object) => object.key === key);
  const folder = key === '' || key.endsWith('/') ? key : `${key}/`;
  const objects = exact ? [exact] : listed.filter((object) => object.key.startsWith(folder));
  if (objects.length === 0) throw new RemoteReadError(`${where} holds no objects`);
  const entries = new Map<string, RemoteEntry>();
  for (const object of objects) {
    // The objects of a File Geodatabase are one entry: its folder.
    const gdb = /^(.*?\.gdb)\//i.exec(object.key);
    const path = gdb ? gdb[1]! : object.key;
    const known = entries.get(path);
    if (!known || known.modified < object.lastModified) entries.set(path, { path, modified: object.lastModified });
  }
  return [...entries.values()];
}

/** The parts of a location's record the remote reader uses. */
function fromRecord(record: StorageLocationRecord): RemoteLocation {
  const model = {
    id: 0, slug: record.slug, name: record.name, backend_type: record.backend_type, config: buildStorageLocationConfig(record),
  } as StorageLocationModel;
  return { slug: record.slug, model };
}
