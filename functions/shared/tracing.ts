/**
 * X-Ray subsegments for every AWS SDK call of every function, without the X-Ray SDK: {@link traceSdkCalls}
 * puts one middleware on a client that, when the invocation is sampled, sends one subsegment per call to the
 * X-Ray daemon over UDP — the service (name, namespace `aws`), `aws.operation`, `aws.region`,
 * `aws.request_id`, `aws.retries`, the table or other resource the call names, the HTTP status, the
 * error/throttle/fault flags with the exception, and the start and end times (retries included). The
 * subsegments hang under the function's segment that Lambda's active tracing records (the `Parent` of the
 * invocation's trace header). Outside Lambda, or when not sampled, a call costs one header parse.
 *
 * Why not Powertools Tracer (aws-xray-sdk-core): it added ~120 KiB to each bundle and ~50–60 ms to its cold
 * start, and its async hooks slowed every await of the process; docs/performance.md has the figures.
 */
import { randomBytes } from 'node:crypto';
import { isThrottlingError } from '../../lib/specs/aws-errors.js';
import { daemonAddress, sampledTraceParent, sendToDaemon } from './xray-daemon.js';

/** The middleware's name on each client's stack. */
export const XRAY_MIDDLEWARE_NAME = 'xraySubsegment';

/** What the SDK reports about a call, on its output and on its errors. */
interface CallMetadata {
  httpStatusCode?: number;
  requestId?: string;
  attempts?: number;
}

type Handler = (args: { input: object }) => Promise<{ output: { $metadata?: CallMetadata } }>;
type Middleware = (next: Handler, context: { commandName?: string }) => Handler;

/** The part of an AWS SDK v3 client tracing touches. */
export interface TraceableClient {
  config: { serviceId?: string; region?: unknown };
  middlewareStack: {
    add(middleware: Middleware, options: { step: 'initialize'; priority: 'high'; name: string }): void;
  };
}

/** Input fields that name the resource of a call → the subsegment's `aws` field. */
const RESOURCE_FIELDS: Readonly<Record<string, string>> = {
  TableName: 'table_name',
  jobQueue: 'job_queue',
  jobDefinition: 'job_definition',
  TrainingJobName: 'training_job_name',
  logGroupName: 'log_group_name',
  logGroupIdentifier: 'log_group_name',
};

function resourceOf(input: object): Record<string, string> {
  const resource: Record<string, string> = {};
  for (const [field, name] of Object.entries(RESOURCE_FIELDS)) {
    const value = (input as Record<string, unknown>)[field];
    if (typeof value === 'string') resource[name] = value;
  }
  return resource;
}

async function regionOf(client: TraceableClient): Promise<string | undefined> {
  const { region } = client.config;
  const value = typeof region === 'function' ? await (region as () => Promise<unknown>)() : region;
  return typeof value === 'string' ? value : undefined;
}

/** The outcome part of a subsegment: HTTP status, flags, and the exception of a failed call. */
function outcomeOf(metadata: CallMetadata | undefined, error: unknown): Record<string, unknown> {
  const status = metadata?.httpStatusCode;
  const http = status === undefined ? {} : { http: { response: { status } } };
  if (error === undefined) return http;
  const failure = error as { name?: string; message?: string; $fault?: string };
  // No answer at all (timeout, connection reset) is a fault, as a 5xx is.
  const fault = failure.$fault === 'server' || status === undefined || status >= 500;
  return {
    ...http,
    ...(fault ? { fault: true } : { error: true }),
    ...(isThrottlingError(error) ? { throttle: true } : {}),
    cause: {
      exceptions: [
        {
          id: randomBytes(8).toString('hex'),
          type: failure.name ?? 'Error',
          message: failure.message ?? String(error),
          remote: status !== undefined,
        },
      ],
    },
  };
}

const traced = new WeakSet<object>();

/**
 * Records every call of `client` as an X-Ray subsegment (see the module's description). Idempotent; the call
 * itself is never changed, delayed by the daemon or failed by tracing.
 *
 * @example
 * ```ts
 * const dynamo = traceSdkCalls(new DynamoDBClient({}));
 * ```
 */
export function traceSdkCalls<T extends TraceableClient>(client: T): T {
  if (traced.has(client)) return client;
  traced.add(client);
  const name = client.config.serviceId ?? 'AWS';
  const middleware: Middleware = (next, context) => async (args) => {
    const parent = sampledTraceParent(process.env._X_AMZN_TRACE_ID);
    const daemon = parent && daemonAddress(process.env.AWS_XRAY_DAEMON_ADDRESS);
    if (parent === undefined || daemon === undefined) return next(args);
    const startTime = Date.now() / 1000;
    const record = async (metadata: CallMetadata | undefined, error?: unknown) => {
      try {
        const endTime = Date.now() / 1000;
        await sendToDaemon(daemon, {
          type: 'subsegment',
          id: randomBytes(8).toString('hex'),
          trace_id: parent.traceId,
          parent_id: parent.parentId,
          name,
          namespace: 'aws',
          start_time: startTime,
          end_time: endTime,
          aws: {
            operation: (context.commandName ?? 'Unknown').replace(/Command$/, ''),
            region: await regionOf(client).catch(() => undefined),
            request_id: metadata?.requestId,
            retries: Math.max(0, (metadata?.attempts ?? 1) - 1),
            ...resourceOf(args.input),
          },
          ...outcomeOf(metadata, error),
        });
      } catch {
        // Tracing is best effort.
      }
    };
    try {
      const result = await next(args);
      await record(result.output.$metadata);
      return result;
    } catch (error) {
      await record((error as { $metadata?: CallMetadata }).$metadata, error);
      throw error;
    }
  };
  client.middlewareStack.add(middleware, {
    step: 'initialize',
    priority: 'high',
    name: XRAY_MIDDLEWARE_NAME,
  });
  return client;
}
