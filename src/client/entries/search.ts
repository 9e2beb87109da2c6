// The search page's script: it fetches the index's metadata at once, then a few small chunks per query.
import { startSearchApp } from '../search/search-app.ts';

const root = document.querySelector<HTMLElement>('[data-search-app]');
if (root) startSearchApp(root);
