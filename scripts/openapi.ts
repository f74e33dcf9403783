/**
 * `npm run openapi`: writes docs/openapi.json from the API's zod schemas (functions/shared/openapi.ts).
 * `npm run openapi -- --check` exits 1 when the committed file differs (what the test checks too).
 */
import { buildOpenApiDocument } from '../functions/shared/openapi.js';
import { writeOrCheck } from './generated-file.js';

writeOrCheck(
  new URL('../docs/openapi.json', import.meta.url),
  'docs/openapi.json',
  `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`,
  'npm run openapi',
);
