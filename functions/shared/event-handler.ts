/**
 * The middleware chain of every event-triggered function, the twin of `apiHandler` (`middleware.ts`) without
 * the HTTP parts, so an event function's bundle carries none of them.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger, metrics } from './powertools.js';

/**
 * The chain of an event-triggered function (EventBridge rule, schedule, stream): Powertools logging with the
 * Lambda context, and metrics flushed after every invocation, failed ones included (a throw would skip a
 * flush written in the handler). Errors are thrown on, so the trigger retries or dead-letters the event.
 *
 * @example
 * ```ts
 * export const handler = eventHandler(async (event: StateChangeEnvelope) => handleStateChange(event));
 * ```
 */
export function eventHandler<E, R>(fn: (event: E, context: Context) => Promise<R>) {
  return middy<E, R>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
    .handler(fn);
}
