/**
 * X-Ray subsegments for every AWS SDK call (Powertools Tracer around each client the container creates),
 * for the functions that import this module: the state-change and reconciler functions, which run
 * asynchronously. The API functions do not: the Tracer (aws-xray-sdk-core) adds about 120 KiB to a bundle and
 * tens of milliseconds to its cold start, which a caller waiting on the API would pay (docs/performance.md).
 * Their invocations are still traced (active tracing), without a subsegment per SDK call.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';
import { traceClients } from './container.js';
import { SERVICE_NAME } from './powertools.js';

/** The function's tracer (disabled outside Lambda, so local mode and tests pay nothing). */
export const tracer = new Tracer({ serviceName: SERVICE_NAME });

traceClients((client) => {
  tracer.captureAWSv3Client(client);
});
