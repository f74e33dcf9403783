/** `GET /v1/openapi.json`: the API's OpenAPI 3.1 document (the same as docs/openapi.json). */
import { apiHandler } from '../shared/middleware.js';
import { buildOpenApiDocument } from '../shared/openapi.js';

let document: Record<string, unknown> | undefined;

export const handler = apiHandler({ operation: 'OpenApi' }, async () => {
  document ??= buildOpenApiDocument();
  return { statusCode: 200, body: document };
});
