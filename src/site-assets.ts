/**
 * Public URLs of the bundled client files: by entry name (`file-page`, `console`, `search`), the stylesheets an
 * entry imports as `<entry>.css`, `<entry>.css1`, …, and the base stylesheet as `css`.
 */
export type SiteAssets = Record<string, string>;

let current: SiteAssets = {};

/** Sets the asset URLs every page links to; the renderer calls it once per build. */
export function setSiteAssets(assets: SiteAssets): void {
  current = assets;
}

/** The URL of a bundled entry; fails loudly when the client build did not produce it. */
export function assetUrl(name: string): string {
  const url = current[name];
  if (!url) throw new Error(`the client build has no asset "${name}"`);
  return url;
}

/** The stylesheets a client entry brings, in order; none for an entry that imports no styles. */
export function entryStyles(name: string): string[] {
  const urls: string[] = [];
  for (let position = 0; current[`${name}.css${position || ''}`]; position++) urls.push(current[`${name}.css${position || ''}`]!);
  return urls;
}
