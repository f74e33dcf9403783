/**
 * The one middleware chain every API handler uses: header normalization, JSON body parsing (for routes with
 * a body), Powertools logging with request ids, metrics, and the single error mapper. Handlers stay wiring:
 * they receive a typed request and return `{ statusCode, body }`. Its twin for event-triggered functions
 * is `event-handler.ts`.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { deploymentConfig } from './deployment-config.js';
import { errorResponse, HttpRequestError, statusForCode, toTxsError } from './http-errors.js';
import { type Caller, callerOf } from './identity.js';
import { logger, metrics } from './powertools.js';

/** A JSON media type (`application/json`, `application/<x>+json`, with parameters). */
const JSON_MEDIA_TYPE = /^application\/(.+\+)?json($|;.+)/;

/** Largest accepted request body (bytes). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What a handler gets: the event (body already parsed when the route has one) and helpers. */
export interface ApiRequest {
  event: APIGatewayProxyEvent;
  /** Parsed JSON body (routes with `body: true`). */
  body: unknown;
  /** The caller's owner identity (see identity.ts; locally, the X-Txs-User header). */
  owner: string;
  /** The caller: owner, and whether it is a deployment admin. */
  caller: Caller;
  /**
   * The owner whose apps this caller may address by handle: its own, or undefined (every app) for an admin.
   * Pass it to the runner's read, cancel, delete and logs verbs.
   */
  scope: string | undefined;
  /** Path parameter (already URL-decoded). */
  path(name: string): string;
  /** First value of a query parameter. */
  query(name: string): string | undefined;
  /** Every value of a repeatable query parameter. */
  queryAll(name: string): string[];
  /** A request header (lower-case name). */
  header(name: string): string | undefined;
}

/** What a handler returns. */
export interface ApiResponse {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Options of {@link apiHandler}. */
export interface ApiHandlerOptions {
  /** The route has a JSON body. */
  body?: boolean;
  /** Metric name for successful calls. */
  operation: string;
}

function requestOf(event: APIGatewayProxyEvent): ApiRequest {
  let caller: Caller | undefined;
  const who = () => {
    caller ??= callerOf(event.requestContext?.identity, deploymentConfig().identity);
    return caller;
  };
  return {
    event,
    body: event.body,
    get owner() {
      return who().owner;
    },
    get caller() {
      return who();
    },
    get scope() {
      const c = who();
      return c.admin ? undefined : c.owner;
    },
    path(name) {
      const raw = event.pathParameters?.[name];
      if (raw === undefined || raw === '')
        throw new HttpRequestError('ValidationFailed', `missing path parameter ${name}`);
      try {
        return decodeURIComponent(raw);
      } catch {
        return raw;
      }
    },
    query(name) {
      return (
        event.multiValueQueryStringParameters?.[name]?.[0] ?? event.queryStringParameters?.[name] ?? undefined
      );
    },
    queryAll(name) {
      const multi = event.multiValueQueryStringParameters?.[name];
      if (multi) return [...multi];
      const single = event.queryStringParameters?.[name];
      return single === undefined || single === null ? [] : [single];
    },
    header(name) {
      return event.headers?.[name.toLowerCase()] ?? undefined;
    },
  };
}

/**
 * Wraps a route function in the shared chain.
 *
 * @example
 * ```ts
 * export const handler = apiHandler({ operation: 'Status' }, async (req) => ({ statusCode: 200, body: {...} }));
 * ```
 */
export function apiHandler(
  options: ApiHandlerOptions,
  fn: (request: ApiRequest, context: Context) => Promise<ApiResponse>,
) {
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpHeaderNormalizer())
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .use({
      before: async (request) => {
        logger.appendKeys({ apiRequestId: request.event.requestContext?.requestId });
        const body = request.event.body;
        if (options.body && typeof body === 'string' && Buffer.byteLength(body) > MAX_BODY_BYTES) {
          throw new HttpRequestError(
            'PayloadTooLarge',
            `The request body is larger than ${MAX_BODY_BYTES} bytes`,
          );
        }
        // The media type is checked here, so every error of the body parser is a body that is not JSON.
        if (options.body && !JSON_MEDIA_TYPE.test(request.event.headers?.['content-type'] ?? '')) {
          throw new HttpRequestError(
            'UnsupportedMediaType',
            'Send the body as JSON with Content-Type: application/json',
          );
        }
      },
    });
  if (options.body) chain.use(httpJsonBodyParser());
  chain.use({
    onError: async (request) => {
      const requestId =
        request.event?.requestContext?.requestId ?? request.context?.awsRequestId ?? 'unknown';
      const known = toTxsError(request.error);
      if (known) {
        const log = statusForCode(known.code) >= 500 ? logger.error : logger.info;
        log.call(logger, 'request rejected', { code: known.code, reason: known.message, cause: known.cause });
        metrics.addMetric(`${options.operation}Rejected`, 'Count', 1);
      } else {
        logger.error('internal error', request.error as Error);
        metrics.addMetric(`${options.operation}Failed`, 'Count', 1);
      }
      request.response = errorResponse(request.error, requestId);
    },
  });
  return chain.handler(async (event, context) => {
    const response = await fn(requestOf(event), context);
    metrics.addMetric(`${options.operation}Succeeded`, 'Count', 1);
    return {
      statusCode: response.statusCode,
      headers: { 'content-type': 'application/json', ...(response.headers ?? {}) },
      body: JSON.stringify(response.body),
    };
  });
}
