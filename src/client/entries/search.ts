// The search page's script: Pagefind itself is imported only once the page runs (see search/pagefind.ts).
import { startSearchApp } from '../search/search-app.ts';

const root = document.querySelector<HTMLElement>('[data-search-app]');
if (root) startSearchApp(root);
