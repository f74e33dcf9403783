import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildUiAssets } from '../../../lib/loopback/ui-assets.js';

const UI_DIR = fileURLToPath(new URL('../../../ui', import.meta.url));

describe('the dashboard bundle', () => {
  it('stays within 150 KB gzipped for the page, its script and its style sheet together', async () => {
    const assets = await buildUiAssets(UI_DIR);
    const sizes = Object.fromEntries(
      Object.entries(assets).map(([name, text]) => [name, gzipSync(text, { level: 9 }).length]),
    );
    console.table(sizes);
    expect(assets.js.length).toBeGreaterThan(1000);
    expect(sizes.html! + sizes.js! + sizes.css!).toBeLessThanOrEqual(150 * 1024);
  });

  it('loads nothing from the network: no absolute URL in the page or the style sheet, no fetch beyond /v1', async () => {
    const assets = await buildUiAssets(UI_DIR);
    expect(assets.html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(assets.css).not.toMatch(/url\(|@import/);
    expect(assets.js).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });
});
