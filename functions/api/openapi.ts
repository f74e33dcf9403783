/**
 * `GET /v1/openapi.json`: the API's OpenAPI 3.1 document, served as committed in docs/openapi.json (which
 * `npm run openapi` generates from the zod schemas, and a test keeps equal to them): the function builds
 * nothing at run time and carries no zod.
 */
import document from '../../docs/openapi.json' with { type: 'json' };
import { apiHandler } from '../shared/middleware.js';

export const handler = apiHandler({ operation: 'OpenApi' }, async () => ({
  statusCode: 200,
  body: document,
}));
