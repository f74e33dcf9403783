/** `GET /v1/schedulers`: the schedulers available here with their run options. */

import { describeSchedulers } from '../schedulers/table.js';
import { apiHandler } from '../shared/middleware.js';

export const handler = apiHandler({ operation: 'ListSchedulers' }, async () => ({
  statusCode: 200,
  body: { schedulers: await describeSchedulers() },
}));
