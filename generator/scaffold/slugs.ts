/** The slugs `geoshelf add` makes of file, layer, bucket and host names. */

/** A slug from a file, layer, bucket or host name: lower case, letters and digits, single hyphens. */
export function slugOf(name: string): string {
  const slug = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return slug || 'data';
}

/** `slug`, or `slug-2`, `slug-3`… when it is taken. */
export function uniqueSlug(slug: string, taken: Set<string>): string {
  if (!taken.has(slug)) return slug;
  let index = 2;
  while (taken.has(`${slug}-${index}`)) index++;
  return `${slug}-${index}`;
}
