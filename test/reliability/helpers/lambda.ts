/**
 * API Gateway proxy events and Lambda contexts for invoking the deployed handlers in-process, as API Gateway
 * (REST, IAM auth) and the Lambda runtime would. Shared by the reliability tests and the benchmarks.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { lambdaContext as localLambdaContext, proxyEvent } from '../../../lib/local/lambda-events.js';

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
  return localLambdaContext(functionName);
}

/** The REST proxy event API Gateway would send for `call`. */
export function apiEvent(call: ApiCall): APIGatewayProxyEvent {
  const headers: Record<string, string[]> = Object.fromEntries(
    Object.entries(call.headers ?? {}).map(([k, v]) => [k, [v]]),
  );
  let body: string | null = null;
  if (call.raw !== undefined) body = call.raw;
  else if (call.body !== undefined) body = JSON.stringify(call.body);
  if (body !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['Content-Type'] = ['application/json'];
  }
  const query = Object.fromEntries(
    Object.entries(call.query ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]),
  );
  const path = call.resource.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(call.pathParameters?.[name] ?? ''),
  );
  return proxyEvent({
    method: call.method,
    resource: call.resource,
    path,
    headers,
    query,
    pathParameters: call.pathParameters ?? null,
    body,
    isBase64Encoded: false,
    user: call.user ?? 'arn:aws:iam::000000000000:user/alice',
    sourceIp: '127.0.0.1',
    userAgent: 'txs-test',
  });
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
