import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserUnavailable, launchBrowser } from './helpers/browser.ts';
import { ROOT } from './helpers/catalog.ts';
import { startGeoshelf, type RunningSite } from './helpers/web-app.ts';

const MEGACITIES = 'geonames.megacities.megacities';
const MAPLIBRE = join(ROOT, 'node_modules/maplibre-gl/dist');

describe.skipIf(browserUnavailable)('MapLibre draws a collection from its OGC API - Tiles tileset', () => {
  let site: RunningSite;
  let browser: Browser;
  beforeAll(async () => {
    [site, browser] = await Promise.all([startGeoshelf(), launchBrowser()]);
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it('from the collection\'s MapLibre style, whose source is the tileset\'s TileJSON', async () => {
    const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
    // A bare page on the site's origin with MapLibre from node_modules: nothing of the web app's own map code.
    await page.route(`${site.origin}/__map/**`, async (route) => {
      const name = new URL(route.request().url()).pathname.slice('/__map/'.length);
      if (name === 'index.html') return route.fulfill({ contentType: 'text/html', body: '<!doctype html><div id="map" style="width:800px;height:600px"></div>' });
      return route.fulfill({ contentType: 'text/javascript', body: await readFile(join(MAPLIBRE, name)) });
    });
    const tiles: string[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/tiles/WebMercatorQuad/') && response.status() === 200) tiles.push(response.url());
    });
    await page.goto(`${site.origin}/__map/index.html`);
    await page.addScriptTag({ type: 'module', content: "import * as maplibre from '/__map/maplibre-gl.mjs'; maplibre.setWorkerUrl('/__map/maplibre-gl-worker.mjs'); window.maplibre = maplibre;" });
    await page.waitForFunction(() => 'maplibre' in window);
    const drawn = await page.evaluate(async (styleUrl) => {
      const maplibre = (window as unknown as { maplibre: any }).maplibre;
      const map = new maplibre.Map({ container: 'map', style: styleUrl, center: [139.69, 35.69], zoom: 3 });
      await new Promise<void>((resolve, reject) => {
        map.once('idle', () => resolve());
        map.once('error', (event: { error: Error }) => reject(event.error));
      });
      const features = map.queryRenderedFeatures();
      return { layers: map.getStyle().layers.map((layer: { id: string }) => layer.id), names: features.map((feature: { properties: { name?: string } }) => feature.properties.name) };
    }, `${site.origin}/features/collections/${MEGACITIES}/styles/default`);
    expect(drawn.layers.length).toBeGreaterThan(0);
    expect(drawn.names).toContain('Tokyo');
    expect(tiles.length).toBeGreaterThan(0);
    await page.close();
  }, 120_000);
});
