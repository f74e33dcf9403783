/**
 * The API Gateway REST proxy events and Lambda contexts the local server (and the in-process tests and
 * benchmarks) hand to the deployed handlers, shaped as API Gateway with IAM auth and the Lambda runtime
 * would send them.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/** A Lambda context for `functionName`. */
export function lambdaContext(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/** What an HTTP request says, before it becomes a proxy event. */
export interface ProxyRequest {
  method: string;
  /** Resource path with `{param}` segments, e.g. `/v1/apps/{scheduler}/{appId}`. */
  resource: string;
  /** The request path as sent. */
  path: string;
  /** Every value of every header, in order. */
  headers: Record<string, string[]>;
  /** Every value of every query parameter, in order. */
  query: Record<string, string[]>;
  pathParameters: Record<string, string> | null;
  body: string | null;
  isBase64Encoded: boolean;
  /** The caller's identity (the IAM principal API Gateway puts in `requestContext.identity`). */
  user: string;
  sourceIp: string;
  userAgent: string | null;
}

function lastValues(multi: Record<string, string[]>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(multi).map(([k, values]) => [k, values[values.length - 1] as string]),
  );
}

/**
 * The REST proxy event API Gateway would send for `request` (single-value maps hold the last value).
 *
 * @example
 * ```ts
 * const event = proxyEvent({ method: 'GET', resource: '/v1/apps', path: '/v1/apps', headers: {}, query: {},
 *   pathParameters: null, body: null, isBase64Encoded: false, user: 'alice', sourceIp: '127.0.0.1',
 *   userAgent: null });
 * ```
 */
export function proxyEvent(request: ProxyRequest): APIGatewayProxyEvent {
  const hasQuery = Object.keys(request.query).length > 0;
  const { user } = request;
  return {
    resource: request.resource,
    path: request.path,
    httpMethod: request.method,
    headers: lastValues(request.headers),
    multiValueHeaders: request.headers,
    queryStringParameters: hasQuery ? lastValues(request.query) : null,
    multiValueQueryStringParameters: hasQuery ? request.query : null,
    pathParameters: request.pathParameters,
    stageVariables: null,
    body: request.body,
    isBase64Encoded: request.isBase64Encoded,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      path: request.path,
      stage: 'local',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: request.resource,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: user,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.sourceIp,
        user,
        userAgent: request.userAgent,
        userArn: user,
      },
    },
  };
}
