/**
 * The deployed functions in-process: DynamoDB is dynalite, Batch/SageMaker/Logs are the fake data plane, the
 * store's DynamoDB client gets middleware that counts its calls, and its request handler can inject DynamoDB
 * faults (throttling, 5xx, timeouts before and after the write) under the SDK's own retry logic.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { type HttpHandler, type HttpRequest, HttpResponse } from '@smithy/protocol-http';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { FakeAws, type FaultOptions } from './fake-aws.js';
import type { ProxyHandler } from './lambda.js';

type Container = typeof import('../../../functions/shared/container.js');
type Runners = typeof import('../../../functions/schedulers/table.js');

/** Route name → handler module (as in functions/routes.ts). */
const API_MODULES = {
  Schedulers: () => import('../../../functions/api/schedulers.js'),
  Components: () => import('../../../functions/api/components.js'),
  Dryrun: () => import('../../../functions/api/dryrun.js'),
  Run: () => import('../../../functions/api/run.js'),
  List: () => import('../../../functions/api/list.js'),
  Counts: () => import('../../../functions/api/counts.js'),
  Status: () => import('../../../functions/api/status.js'),
  Delete: () => import('../../../functions/api/delete.js'),
  Cancel: () => import('../../../functions/api/cancel.js'),
  Logs: () => import('../../../functions/api/logs.js'),
} as const;

/** A running environment. */
export interface FunctionsEnvironment {
  db: Dynalite;
  aws: FakeAws;
  api: Record<keyof typeof API_MODULES, ProxyHandler>;
  handleStateChange: typeof import('../../../functions/events/state-change.js').handleStateChange;
  reconcileAll: typeof import('../../../functions/reconciler/handler.js').reconcileAll;
  container: Container;
  /** The Planner and Runner wiring (functions/schedulers/table.ts). */
  runners: Runners;
  /** DynamoDB calls by command (e.g. `GetCommand`) since the last take. */
  takeDynamoCalls(): Record<string, number>;
  /** Fault injection on DynamoDB calls (undefined: none). */
  setDynamoFaults(faults: FaultOptions | undefined): void;
  /**
   * Benchmarks: answer DynamoDB calls in memory (no socket) with `responder(operation)`; the SDK
   * client still serializes, signs and parses. Undefined: calls go to dynalite.
   */
  setDynamoResponder(responder: ((operation: string) => unknown) | undefined): void;
  /**
   * The next call of `command` (e.g. `PutItemCommand`) loses its response: the request reaches DynamoDB (with
   * `afterWrite`, it is applied) and the client sees a timeout, under its own retries.
   */
  loseNextDynamoResponse(command: string, afterWrite: boolean): void;
  /** Injected DynamoDB faults by kind. */
  dynamoInjected: { throttling: number; server: number; timeout: number; timeoutAfterWrite: number };
  close(): Promise<void>;
}

/** A DynamoDB error response as DynamoDB sends it. */
function dynamoErrorResponse(kind: 'throttling' | 'server'): HttpResponse {
  const type = kind === 'throttling' ? 'ThrottlingException' : 'InternalServerError';
  return new HttpResponse({
    statusCode: kind === 'throttling' ? 400 : 500,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': type },
    body: Buffer.from(
      JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: `injected ${type}` }),
    ),
  });
}

/** A request that got no response (the SDK retries it as a transient failure). */
function injectedTimeout(what: string): Error {
  return Object.assign(new Error(`socket timed out (${what})`), { name: 'TimeoutError', code: 'ETIMEDOUT' });
}

/** Starts dynalite, the fake AWS data plane and the functions (schedulers aws_batch and aws_sagemaker). */
export async function startFunctionsEnvironment(
  options: { schedulers?: string; dynalite?: () => Promise<Dynalite> } = {},
): Promise<FunctionsEnvironment> {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const db = await (options.dynalite ?? startDynalite)();
  process.env.TXS_TABLE_NAME = db.tableName;
  process.env.TXS_DYNAMODB_ENDPOINT = db.endpoint;
  process.env.TXS_SCHEDULERS = options.schedulers ?? 'aws_batch,aws_sagemaker';
  process.env.TXS_BATCH_QUEUES = 'ml-gpu-queue';
  delete process.env.TXS_EVENT_BUS_NAME;
  const aws = new FakeAws();
  const dynamoCalls = new Map<string, number>();
  let faults: FaultOptions | undefined;
  let responder: ((operation: string) => unknown) | undefined;
  let faultTurn = 0;
  let lose: { command: string; afterWrite: boolean } | undefined;
  const dynamoInjected = { throttling: 0, server: 0, timeout: 0, timeoutAfterWrite: 0 };
  const container = await import('../../../functions/shared/container.js');
  const runners = await import('../../../functions/schedulers/table.js');
  // Faults and lost responses are injected per attempt, in the SDK client's request handler (under its
  // retries); the call counter is middleware around the whole call, as an application sees it.
  const wire = new NodeHttpHandler();
  /** Sends `request` to dynalite and drains the answer (the write is applied; the caller never sees it). */
  const applyUnseen = async (request: HttpRequest) => {
    const { response } = await wire.handle(request);
    for await (const _chunk of response.body as AsyncIterable<unknown>);
  };
  const requestHandler: HttpHandler = {
    async handle(request: HttpRequest) {
      const operation = (request.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
      if (lose && lose.command === `${operation}Command`) {
        const { afterWrite } = lose;
        lose = undefined;
        if (afterWrite) await applyUnseen(request);
        throw injectedTimeout('injected, response lost');
      }
      if (responder) {
        const body = Buffer.from(JSON.stringify(responder(operation)));
        return { response: new HttpResponse({ statusCode: 200, headers: {}, body }) };
      }
      if (!faults || faults.random() >= faults.rate) return wire.handle(request);
      const kind = (['throttling', 'server', 'timeout'] as const)[faultTurn++ % 3] as
        | 'throttling'
        | 'server'
        | 'timeout';
      if (kind === 'timeout') {
        const afterWrite = faults.random() < 0.5;
        if (afterWrite) {
          dynamoInjected.timeoutAfterWrite += 1;
          await applyUnseen(request);
        } else dynamoInjected.timeout += 1;
        throw injectedTimeout('injected');
      }
      dynamoInjected[kind] += 1;
      return { response: dynamoErrorResponse(kind) };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {};
    },
  };
  container.configureLocalMode({ dynamoDbRequestHandler: requestHandler });
  container.configureClients((client) => {
    if (!(client instanceof DynamoDBClient)) return;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = context.commandName ?? 'unknown';
        dynamoCalls.set(name, (dynamoCalls.get(name) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize' },
    );
  });
  const api = {} as Record<keyof typeof API_MODULES, ProxyHandler>;
  for (const [name, load] of Object.entries(API_MODULES)) {
    api[name as keyof typeof API_MODULES] = ((await load()) as { handler: ProxyHandler }).handler;
  }
  const { handleStateChange } = await import('../../../functions/events/state-change.js');
  const { reconcileAll } = await import('../../../functions/reconciler/handler.js');
  return {
    db,
    aws,
    api,
    handleStateChange,
    reconcileAll,
    container,
    runners,
    takeDynamoCalls() {
      const out = Object.fromEntries([...dynamoCalls.entries()].sort());
      dynamoCalls.clear();
      return out;
    },
    setDynamoFaults(next) {
      faults = next;
    },
    setDynamoResponder(next) {
      responder = next;
    },
    loseNextDynamoResponse(command, afterWrite) {
      lose = { command, afterWrite };
    },
    dynamoInjected,
    async close() {
      container.configureClients(undefined);
      container.configureLocalMode({});
      await runners.closeRunner();
      wire.destroy();
      aws.restore();
      await db.close();
    },
  };
}
