/**
 * `npm run openapi`: writes docs/openapi.json from the API's zod schemas (functions/shared/openapi.ts).
 * `npm run openapi -- --check` exits 1 when the committed file differs (what the test checks too).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../functions/shared/openapi.js';

const FILE = new URL('../docs/openapi.json', import.meta.url);
const text = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(FILE, 'utf8');
  } catch {}
  if (committed !== text) {
    console.error('docs/openapi.json is stale: run `npm run openapi` and commit it');
    process.exit(1);
  }
} else {
  writeFileSync(FILE, text);
  console.log(`wrote docs/openapi.json (${text.length} bytes)`);
}
