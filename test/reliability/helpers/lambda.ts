/**
 * API Gateway proxy events and Lambda contexts for invoking the deployed handlers in-process, as API Gateway
 * (REST, IAM auth) and the Lambda runtime would. Shared by the reliability tests and the benchmarks.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

/** What a test says about a request. */
export interface ApiCall {
  method: 'GET' | 'POST' | 'DELETE';
  /** Resource path with `{param}` segments, e.g. `/v1/apps/{scheduler}/{appId}`. */
  resource: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  /** A JSON value (serialized) or a raw string body. */
  body?: unknown;
  raw?: string;
  /** The caller (IAM user ARN). */
  user?: string;
}

/** A proxy handler as the functions export it. */
export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** A Lambda context for `functionName`. */
export function lambdaContext(functionName = 'txs-test'): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 30_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/** The REST proxy event API Gateway would send for `call`. */
export function apiEvent(call: ApiCall): APIGatewayProxyEvent {
  const user = call.user ?? 'arn:aws:iam::000000000000:user/alice';
  const headers: Record<string, string> = { ...(call.headers ?? {}) };
  let body: string | null = null;
  if (call.raw !== undefined) body = call.raw;
  else if (call.body !== undefined) body = JSON.stringify(call.body);
  if (body !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['Content-Type'] = 'application/json';
  }
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(call.query ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    multi[key] = values;
    single[key] = values[values.length - 1] as string;
  }
  const path = call.resource.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(call.pathParameters?.[name] ?? ''),
  );
  const hasQuery = Object.keys(single).length > 0;
  return {
    resource: call.resource,
    path,
    httpMethod: call.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: hasQuery ? single : null,
    multiValueQueryStringParameters: hasQuery ? multi : null,
    pathParameters: call.pathParameters ?? null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'test',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: call.method,
      path,
      stage: 'v1',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'test',
      resourcePath: call.resource,
      identity: {
        accessKey: null,
        accountId: '000000000000',
        apiKey: null,
        apiKeyId: null,
        caller: user,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '127.0.0.1',
        user,
        userAgent: 'txs-test',
        userArn: user,
      },
    },
  };
}

/** A handler's reply with the body parsed. */
export interface ApiReply {
  statusCode: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Invokes `handler` with `call` and parses the JSON reply. */
export async function invoke(handler: ProxyHandler, call: ApiCall): Promise<ApiReply> {
  const result = await handler(apiEvent(call), lambdaContext());
  return {
    statusCode: result.statusCode,
    headers: (result.headers ?? {}) as Record<string, string>,
    body: result.body ? (JSON.parse(result.body) as Record<string, unknown>) : {},
  };
}
