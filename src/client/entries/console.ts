/**
 * Entry of the `/console/` page: starts the SQL console on the element ConsoleApp.astro renders. CodeMirror,
 * the map and DuckDB-wasm are loaded later, by `import()`, when they are used.
 */
import '../../styles/console.css';
import { ConsoleApp } from '../console/console-app.ts';

const root = document.querySelector<HTMLElement>('[data-console]');
if (root) {
  new ConsoleApp(root, {
    queryOrigin: root.dataset.queryOrigin ?? '',
    browserLimitBytes: Number(root.dataset.browserSqlLimit) || 50_000_000,
  });
}
