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

/**
 * The function's tracer (it records nothing outside Lambda). Importing it enables aws-xray-sdk-core's async
 * hooks, which slow every await of the process about tenfold: only the two Lambda handler modules import
 * this; the local server calls their work modules (apply-state-change.ts, reconcile-all.ts) instead.
 */
export const tracer = new Tracer({ serviceName: SERVICE_NAME });

traceClients((client) => {
  tracer.captureAWSv3Client(client);
});
