import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('../../../lib/loopback/ui-assets.ts', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'txs-ui-assets-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A package tree with a copy of ui-assets.ts at `at` (relative to its root) and a `dist/ui` build. */
function packageWith(name: string, at: string): string {
  const root = join(work, name);
  mkdirSync(join(root, at, '..'), { recursive: true });
  copyFileSync(MODULE, join(root, at));
  writeFileSync(join(root, 'package.json'), '{"type":"module"}');
  mkdirSync(join(root, 'dist/ui'), { recursive: true });
  writeFileSync(join(root, 'dist/ui/index.html'), '<p>built</p>');
  writeFileSync(join(root, 'dist/ui/app.js'), 'built()');
  writeFileSync(join(root, 'dist/ui/app.css'), 'p{}');
  return root;
}

describe('the dashboard page files', () => {
  it("are the package's prebuilt dist/ui wherever the module sits in an installed package", async () => {
    // Compiled (dist/lib/loopback/) and bundled (dist/cli/) copies find the same files. A directory
    // called ui next to the package (another package's) is never looked at.
    for (const at of ['dist/lib/loopback/ui-assets.ts', 'dist/cli/ui-assets.ts']) {
      const root = packageWith(at.replaceAll('/', '_'), at);
      mkdirSync(join(root, '../ui'), { recursive: true });
      writeFileSync(join(root, '../ui/app.js'), 'someone else’s');
      const { uiAssets } = await import(join(root, at));
      expect(await uiAssets()).toEqual({ html: '<p>built</p>', js: 'built()', css: 'p{}' });
    }
  });

  it('are built from the ui/ sources in a clone, even beside an older dist/ui', async () => {
    const root = packageWith('clone', 'lib/loopback/ui-assets.ts');
    symlinkSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)), join(root, 'node_modules'));
    mkdirSync(join(root, 'ui'));
    writeFileSync(join(root, 'ui/index.html'), '<p>sources</p>');
    writeFileSync(join(root, 'ui/main.ts'), "document.title = 'from sources';\n");
    writeFileSync(join(root, 'ui/style.css'), 'p { color: red }\n');
    const { uiAssets } = await import(join(root, 'lib/loopback/ui-assets.ts'));
    const assets = await uiAssets();
    expect(assets.html).toBe('<p>sources</p>');
    expect(assets.js).toContain('from sources');
  });
});
