import { experimental_AstroContainer } from 'astro/container';
import CollectionPage from './views/CollectionPage.astro';
import ConsolePage from './views/ConsolePage.astro';
import DatasetPage from './views/DatasetPage.astro';
import DevelopersPage from './views/DevelopersPage.astro';
import FilePage from './views/FilePage.astro';
import HomePage from './views/HomePage.astro';
import NotFoundPage from './views/NotFoundPage.astro';
import SearchPage from './views/SearchPage.astro';
import { setSiteAssets, type SiteAssets } from './site-assets.ts';
import type { PageView, ViewProps } from './view-types.ts';

const VIEWS: Record<keyof ViewProps, Parameters<experimental_AstroContainer['renderToString']>[0]> = {
  home: HomePage,
  collection: CollectionPage,
  dataset: DatasetPage,
  file: FilePage,
  'search-results': SearchPage,
  console: ConsolePage,
  developers: DevelopersPage,
  'not-found': NotFoundPage,
};

/** Renders page views to HTML documents. */
export interface SiteRenderer {
  render(page: PageView): Promise<string>;
}

/**
 * The entry the generator compiles with Astro's Vite plugins: it renders each page view with the container API,
 * linking the client bundles named in `assets`.
 */
export async function createSiteRenderer(assets: SiteAssets): Promise<SiteRenderer> {
  setSiteAssets(assets);
  const container = await experimental_AstroContainer.create();
  return {
    render: (page) => container.renderToString(VIEWS[page.view], { props: page.props as Record<string, unknown>, partial: false }),
  };
}
