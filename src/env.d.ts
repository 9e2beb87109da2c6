/// <reference types="astro/client" />

// `.astro` files are compiled by Astro's Vite plugins; to tsc they are component factories.
declare module '*.astro' {
  const component: import('astro/runtime/server/index.js').AstroComponentFactory;
  export default component;
}
