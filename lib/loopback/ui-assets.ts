/**
 * The dashboard's files (`ui/`), for the local server (`/`) and `txs ui`: the prebuilt `dist/ui/` of the
 * package, or, in a clone, bundled from `ui/main.ts` with esbuild on first use (kept in memory).
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The dashboard's three files. */
export interface UiAssets {
  html: string;
  js: string;
  css: string;
}

/** Where the page is served: `/` is the page, these paths its script and style sheet. */
export const UI_PATHS = { page: '/', js: '/ui/app.js', css: '/ui/app.css' } as const;

/** esbuild options of the page's bundle (one ES module for browsers, minified, no source text from elsewhere). */
export const UI_BUILD_OPTIONS = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'] as string[],
  minify: true,
  legalComments: 'none',
  logLevel: 'error',
} as const;

type Esbuild = typeof import('esbuild');

/**
 * Bundles the page from the sources in `uiDir` (`main.ts`, `style.css`, `index.html`).
 *
 * @example
 * ```ts
 * const { js } = await buildUiAssets('/repo/ui');
 * ```
 */
export async function buildUiAssets(uiDir: string): Promise<UiAssets> {
  // A computed name: bundlers of the CLI leave esbuild out (it exists only in a clone).
  const name = 'esbuild';
  const esbuild = (await import(name)) as Esbuild;
  const result = await esbuild.build({
    ...UI_BUILD_OPTIONS,
    entryPoints: { app: `${uiDir}/main.ts`, style: `${uiDir}/style.css` },
    outdir: '/ui-out',
    write: false,
  });
  const file = (ext: string) => (result.outputFiles ?? []).find((f) => f.path.endsWith(ext))?.text ?? '';
  return { html: readFileSync(`${uiDir}/index.html`, 'utf8'), js: file('.js'), css: file('.css') };
}

/**
 * The root of this package: the nearest directory above this module with a `package.json` — the clone, or
 * the installed package — wherever the module runs from (`lib/loopback/` through tsx, `dist/lib/loopback/`
 * compiled, or inside the `dist/cli/` bundle).
 */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

let cached: Promise<UiAssets> | undefined;

/** The page's files: in a clone, built from the `ui/` sources; in an installed package, the prebuilt `dist/ui`. */
export function uiAssets(): Promise<UiAssets> {
  cached ??= (async () => {
    const root = packageRoot();
    if (existsSync(join(root, 'ui/main.ts'))) return buildUiAssets(join(root, 'ui'));
    const built = join(root, 'dist/ui');
    if (existsSync(join(built, 'app.js'))) {
      const read = (f: string) => readFileSync(join(built, f), 'utf8');
      return { html: read('index.html'), js: read('app.js'), css: read('app.css') };
    }
    throw new Error('the dashboard is not built: run `npm run build`');
  })();
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}

/** Headers of every dashboard response: no framing, no sniffing, nothing loaded from elsewhere. */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * Answers a `GET`/`HEAD` of the page or one of its files; returns false (sending nothing) for other paths.
 */
export async function serveUi(method: string, path: string, res: ServerResponse): Promise<boolean> {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const types: Record<string, [keyof UiAssets, string]> = {
    [UI_PATHS.page]: ['html', 'text/html; charset=utf-8'],
    '/index.html': ['html', 'text/html; charset=utf-8'],
    [UI_PATHS.js]: ['js', 'text/javascript; charset=utf-8'],
    [UI_PATHS.css]: ['css', 'text/css; charset=utf-8'],
  };
  const entry = types[path];
  if (!entry) return false;
  const assets = await uiAssets();
  const body = assets[entry[0]];
  res.writeHead(200, {
    ...UI_SECURITY_HEADERS,
    'content-type': entry[1],
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(method === 'HEAD' ? undefined : body);
  return true;
}
