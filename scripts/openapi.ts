/**
 * `npm run openapi`: writes docs/openapi.json from the API's zod schemas (scripts/openapi-document.ts).
 * `npm run openapi -- --check` exits 1 when the committed file differs (what the test checks too).
 */

import { writeOrCheck } from './generated-file.js';
import { buildOpenApiDocument } from './openapi-document.js';

writeOrCheck(
  new URL('../docs/openapi.json', import.meta.url),
  'docs/openapi.json',
  `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`,
  'npm run openapi',
);
