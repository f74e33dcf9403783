/** `GET /v1/components`: the builtin components and their arguments. */
import { describeComponents } from '../../lib/components/index.js';
import { apiHandler } from '../shared/middleware.js';

export const handler = apiHandler({ operation: 'ListComponents' }, async () => ({
  statusCode: 200,
  body: { components: describeComponents() },
}));
