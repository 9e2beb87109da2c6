// The web app's Astro settings. The generator compiles the page views with Astro's Vite plugins (see
// generator/emit/site/compile-site.ts) and renders them with the container API; there is no `astro build`.
import { defineConfig } from 'astro/config';

export default defineConfig({
  srcDir: './src',
  publicDir: './public',
  compressHTML: true,
  devToolbar: { enabled: false },
});
