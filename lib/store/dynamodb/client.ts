/**
 * The store's DynamoDB client: the five item operations the store makes (GetItem, PutItem, UpdateItem,
 * DeleteItem, Query) with plain JavaScript items in and out, plus {@link ItemClient.call} for any other
 * operation (CreateTable, DescribeTable, …) in DynamoDB's JSON form. It speaks DynamoDB's JSON 1.0 protocol,
 * signs with SigV4 and retries as the AWS SDK's standard mode does (three attempts, exponential back-off with
 * full jitter, a retry quota, clock-skew correction).
 *
 * Why not the AWS SDK's DynamoDB client: its import and first request cost ~+80 ms of Lambda cold start and
 * ~190 KB of bundle on their own (bench/results/issue-12-*.json), twice the whole budget of a function
 * (≤ +40 ms, ≤ 250 KB; issue #12). This client is a few hundred lines over `node:https` and `node:crypto`;
 * the tests check its signatures against the SDK's signer, its endpoints against the SDK's endpoint rules,
 * and every operation against a real DynamoDB API (dynalite) and, end to end, against moto.
 *
 * @module
 */
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import {
  DynamoDbServiceError,
  isTransientFailure,
  NETWORK_ERROR_CODES,
  THROTTLING_ERROR_NAMES,
} from '../errors.js';
import { resolveEndpoint, resolveRegion } from './endpoint.js';
import { type AwsCredentials, signPost } from './signer.js';
import { httpTransport, type Transport, type WireResponse } from './transport.js';

/** An item as the store reads and writes it: attribute names to JavaScript values. */
export type Item = Record<string, unknown>;

/** What every output carries about the call. */
export interface ResponseMetadata {
  httpStatusCode?: number;
  /** DynamoDB's `x-amzn-requestid`. */
  requestId?: string;
  /** Attempts made (1 when the first succeeded). */
  attempts: number;
  /** Milliseconds spent waiting between attempts. */
  totalRetryDelay: number;
}

interface ExpressionInput {
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
}

/** GetItem's input, with `Key` as a plain item. */
export interface GetItemInput {
  TableName: string;
  Key: Item;
  ConsistentRead?: boolean;
  ProjectionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
}

/** What a write may return. */
export type ReturnValues = 'NONE' | 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW' | 'UPDATED_NEW';

/** PutItem's input, with `Item` and the expression values as plain values. */
export interface PutItemInput extends ExpressionInput {
  TableName: string;
  Item: Item;
  ConditionExpression?: string;
  ReturnValues?: ReturnValues;
}

/** UpdateItem's input. */
export interface UpdateItemInput extends ExpressionInput {
  TableName: string;
  Key: Item;
  UpdateExpression: string;
  ConditionExpression?: string;
  ReturnValues?: ReturnValues;
}

/** DeleteItem's input. */
export interface DeleteItemInput extends ExpressionInput {
  TableName: string;
  Key: Item;
  ConditionExpression?: string;
  ReturnValues?: ReturnValues;
}

/** Query's input, with `ExclusiveStartKey` as a plain item. */
export interface QueryInput extends ExpressionInput {
  TableName: string;
  IndexName?: string;
  KeyConditionExpression: string;
  FilterExpression?: string;
  ProjectionExpression?: string;
  ExclusiveStartKey?: Item;
  Limit?: number;
  ScanIndexForward?: boolean;
  ConsistentRead?: boolean;
  Select?: 'ALL_ATTRIBUTES' | 'ALL_PROJECTED_ATTRIBUTES' | 'SPECIFIC_ATTRIBUTES' | 'COUNT';
}

/** GetItem's output. */
export interface GetItemOutput {
  Item?: Item;
  $metadata: ResponseMetadata;
}

/** A write's output (`Attributes` with `ReturnValues`). */
export interface WriteItemOutput {
  Attributes?: Item;
  $metadata: ResponseMetadata;
}

/** Query's output. */
export interface QueryOutput {
  Items: Item[];
  Count: number;
  ScannedCount: number;
  LastEvaluatedKey?: Item;
  $metadata: ResponseMetadata;
}

/** A call on its way through the middleware (see {@link ItemClient.middlewareStack}). */
type CallHandler = (args: { input: object }) => Promise<{ output: { $metadata?: ResponseMetadata } }>;
/** A middleware: wraps the next handler; `context.commandName` is `<Operation>Command`, as in the AWS SDK. */
export type CallMiddleware = (next: CallHandler, context: { commandName?: string }) => CallHandler;

/** Options of {@link ItemClient}. */
export interface ItemClientOptions {
  /** Region to sign for (default `AWS_REGION`, then `AWS_DEFAULT_REGION`). */
  region?: string;
  /**
   * Endpoint URL (default `AWS_ENDPOINT_URL_DYNAMODB`, then `AWS_ENDPOINT_URL`, else the regional endpoint,
   * FIPS or dual-stack as `AWS_USE_FIPS_ENDPOINT` / `AWS_USE_DUALSTACK_ENDPOINT` say).
   */
  endpoint?: string;
  /**
   * Credentials, or a provider called before each request (it should cache, as the SDK's providers do).
   * Default: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, where Lambda puts the
   * function role's credentials. Outside Lambda, pass a provider, e.g. `fromNodeProviderChain()` of
   * `@aws-sdk/credential-providers`.
   */
  credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
  /** How requests are sent (default {@link httpTransport}). */
  transport?: Transport;
  /** Attempts per call, first included (default 3, as the SDK's standard mode; 1 disables retries). */
  maxAttempts?: number;
  /** Waits between attempts (default a timer); tests pass a recorder. */
  sleep?: (ms: number) => Promise<void>;
  /** Uniform [0, 1) for the back-off jitter (default `Math.random`). */
  random?: () => number;
  /** Clock (epoch ms) for signing (default `Date.now`). */
  now?: () => number;
}

const TARGET_PREFIX = 'DynamoDB_20120810.';
const CONTENT_TYPE = 'application/x-amz-json-1.0';

/** Errors a signature made with a wrong clock gets: retried once the offset is known. */
const CLOCK_SKEW_ERRORS: ReadonlySet<string> = new Set([
  'InvalidSignatureException',
  'RequestExpired',
  'RequestInTheFuture',
  'RequestTimeTooSkewed',
  'SignatureDoesNotMatch',
  'AuthFailure',
]);

/** The SDK's standard retry quota: a bucket of 500, 5 per retry (10 after a timeout), 1 back per success. */
const RETRY_QUOTA = 500;
const RETRY_COST = 5;
const TIMEOUT_RETRY_COST = 10;
const BASE_DELAY_MS = 100;
const THROTTLING_BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;
/** Skew beyond which a server's clock is believed over ours (the SDK's threshold). */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

function environmentCredentials(): AwsCredentials {
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new DynamoDbServiceError({
      name: 'CredentialsProviderError',
      message:
        'no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (Lambda sets them), or pass `credentials`',
    });
  }
  const sessionToken = process.env.AWS_SESSION_TOKEN;
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/** The error a DynamoDB error response stands for (`__type` and `message` of its JSON body). */
function responseError(response: WireResponse, operation: string): DynamoDbServiceError {
  let type = '';
  let message = '';
  try {
    const body = JSON.parse(response.body) as { __type?: unknown; message?: unknown; Message?: unknown };
    if (typeof body.__type === 'string') type = body.__type.slice(body.__type.lastIndexOf('#') + 1);
    const text = body.message ?? body.Message;
    if (typeof text === 'string') message = text;
  } catch {
    // Not JSON: an XML error (`<Code>`, as some emulators and proxies answer), else named by its status below.
    type = /<Code>([A-Za-z0-9.]{1,100})<\/Code>/.exec(response.body)?.[1] ?? '';
    message = /<Message>([^<]{1,1000})<\/Message>/.exec(response.body)?.[1] ?? '';
  }
  const headerType = response.headers['x-amzn-errortype']?.split(':')[0];
  const name = type || headerType || (response.statusCode >= 500 ? 'InternalServerError' : 'UnknownError');
  return new DynamoDbServiceError({
    name,
    message: message || `DynamoDB ${operation} answered HTTP ${response.statusCode}`,
    statusCode: response.statusCode,
    requestId: response.headers['x-amzn-requestid'],
    throttling: THROTTLING_ERROR_NAMES.has(name) || response.statusCode === 429,
  });
}

/** A Node.js error of a request that got no response, as a retryable service error. */
function networkError(error: unknown): DynamoDbServiceError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !NETWORK_ERROR_CODES.has(code)) return undefined;
  const timeout = code === 'ETIMEDOUT';
  return new DynamoDbServiceError({
    name: timeout ? 'TimeoutError' : (error as Error).name || 'NetworkingError',
    message: (error as Error).message || code,
    code,
    cause: error,
  });
}

function wire(item: Item): Record<string, unknown> {
  return marshall(item, { removeUndefinedValues: true }) as Record<string, unknown>;
}

function plain(item: unknown): Item {
  return unmarshall(item as Parameters<typeof unmarshall>[0]);
}

/** `input` with the named fields marshalled to DynamoDB's attribute-value form. */
function marshalled(input: object, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input };
  for (const field of fields) {
    const value = out[field];
    if (value !== undefined) out[field] = wire(value as Item);
  }
  return out;
}

const KEY_AND_VALUES = ['Key', 'ExpressionAttributeValues'] as const;

/**
 * A DynamoDB client for the store (see the module's description). Build one per process and share it: it
 * keeps connections alive and a retry quota.
 *
 * @example
 * ```ts
 * const client = new ItemClient(); // AWS_REGION and the role's credentials from the environment
 * const { Item } = await client.get({ TableName: 'txs-apps', Key: { pk: 'APP#…', sk: 'RECORD' } });
 * await client.update({
 *   TableName: 'txs-apps', Key: { pk: 'APP#…', sk: 'RECORD' },
 *   UpdateExpression: 'SET #s = :s', ConditionExpression: '#v = :v',
 *   ExpressionAttributeNames: { '#s': 'state', '#v': 'version' },
 *   ExpressionAttributeValues: { ':s': 'RUNNING', ':v': 3 },
 * }); // a failed condition throws DynamoDbServiceError named ConditionalCheckFailedException
 * ```
 */
export class ItemClient {
  /** What tracing reads: the service and the region (the AWS SDK's client config fields). */
  readonly config: { readonly serviceId: 'DynamoDB'; readonly region: string };
  /** Middleware around every call (X-Ray subsegments: functions/shared/tracing.ts). */
  readonly middlewareStack: { add(middleware: CallMiddleware, options?: object): void };
  /** The endpoint requests go to. */
  readonly endpoint: URL;
  private readonly middlewares: CallMiddleware[] = [];
  private readonly transport: Transport;
  private readonly credentials: () => AwsCredentials | Promise<AwsCredentials>;
  private readonly maxAttempts: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private retryTokens = RETRY_QUOTA;
  /** Server time minus ours, learnt from a clock-skew error's `Date` header. */
  private clockOffsetMs = 0;

  /** @throws DynamoDbConfigError when the region or endpoint cannot be resolved. */
  constructor(options: ItemClientOptions = {}) {
    const region = resolveRegion(options.region);
    this.config = { serviceId: 'DynamoDB', region };
    this.endpoint = resolveEndpoint(options.endpoint, region);
    this.transport = options.transport ?? httpTransport();
    const given = options.credentials;
    this.credentials =
      given === undefined ? environmentCredentials : typeof given === 'function' ? given : () => given;
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 3));
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.middlewareStack = { add: (middleware) => void this.middlewares.push(middleware) };
  }

  /** GetItem. */
  async get(input: GetItemInput): Promise<GetItemOutput> {
    const output = await this.call<{ Item?: unknown }>('GetItem', marshalled(input, ['Key']));
    return { ...(output.Item ? { Item: plain(output.Item) } : {}), $metadata: output.$metadata };
  }

  /** PutItem. */
  async put(input: PutItemInput): Promise<WriteItemOutput> {
    return this.write('PutItem', marshalled(input, ['Item', 'ExpressionAttributeValues']));
  }

  /** UpdateItem. */
  async update(input: UpdateItemInput): Promise<WriteItemOutput> {
    return this.write('UpdateItem', marshalled(input, KEY_AND_VALUES));
  }

  /** DeleteItem. */
  async delete(input: DeleteItemInput): Promise<WriteItemOutput> {
    return this.write('DeleteItem', marshalled(input, KEY_AND_VALUES));
  }

  /** One page of a Query. */
  async query(input: QueryInput): Promise<QueryOutput> {
    const output = await this.call<{
      Items?: unknown[];
      Count?: number;
      ScannedCount?: number;
      LastEvaluatedKey?: unknown;
    }>('Query', marshalled(input, ['ExclusiveStartKey', 'ExpressionAttributeValues']));
    return {
      Items: (output.Items ?? []).map(plain),
      Count: output.Count ?? 0,
      ScannedCount: output.ScannedCount ?? 0,
      ...(output.LastEvaluatedKey ? { LastEvaluatedKey: plain(output.LastEvaluatedKey) } : {}),
      $metadata: output.$metadata,
    };
  }

  /**
   * Any DynamoDB operation, with input and output in DynamoDB's JSON form (attribute values marshalled).
   *
   * @throws DynamoDbServiceError for an error response (its `name` is DynamoDB's exception name) or, after
   *   the retries, a request that got no response.
   */
  async call<T extends object = Record<string, unknown>>(
    operation: string,
    input: object,
  ): Promise<T & { $metadata: ResponseMetadata }> {
    let handler: CallHandler = async (args) => ({ output: await this.send(operation, args.input) });
    for (const middleware of this.middlewares)
      handler = middleware(handler, { commandName: `${operation}Command` });
    const { output } = await handler({ input });
    return output as T & { $metadata: ResponseMetadata };
  }

  private async write(operation: string, input: Record<string, unknown>): Promise<WriteItemOutput> {
    const output = await this.call<{ Attributes?: unknown }>(operation, input);
    return {
      ...(output.Attributes ? { Attributes: plain(output.Attributes) } : {}),
      $metadata: output.$metadata,
    };
  }

  /** Sends one call with the retries of the SDK's standard mode. */
  private async send(
    operation: string,
    input: object,
  ): Promise<Record<string, unknown> & { $metadata: ResponseMetadata }> {
    const body = JSON.stringify(input);
    let totalRetryDelay = 0;
    for (let attempt = 1; ; attempt++) {
      let failure: DynamoDbServiceError;
      let skewCorrected = false;
      try {
        const response = await this.transport({
          url: this.endpoint,
          headers: signPost({
            host: this.endpoint.host,
            headers: { 'content-type': CONTENT_TYPE, 'x-amz-target': `${TARGET_PREFIX}${operation}` },
            body,
            region: this.config.region,
            service: 'dynamodb',
            credentials: await this.credentials(),
            time: new Date(this.now() + this.clockOffsetMs),
          }),
          body,
        });
        const metadata: ResponseMetadata = {
          httpStatusCode: response.statusCode,
          requestId: response.headers['x-amzn-requestid'],
          attempts: attempt,
          totalRetryDelay,
        };
        if (response.statusCode >= 200 && response.statusCode < 300) {
          this.retryTokens = Math.min(RETRY_QUOTA, this.retryTokens + 1);
          return { ...(JSON.parse(response.body || '{}') as Record<string, unknown>), $metadata: metadata };
        }
        failure = responseError(response, operation);
        skewCorrected = CLOCK_SKEW_ERRORS.has(failure.name) && this.learnClockOffset(response.headers.date);
      } catch (error) {
        if (error instanceof DynamoDbServiceError) throw error;
        const network = networkError(error);
        if (network === undefined) throw error;
        failure = network;
      }
      failure.$metadata.attempts = attempt;
      failure.$metadata.totalRetryDelay = totalRetryDelay;
      const cost = failure.name === 'TimeoutError' ? TIMEOUT_RETRY_COST : RETRY_COST;
      if (
        attempt >= this.maxAttempts ||
        !(skewCorrected || isTransientFailure(failure)) ||
        this.retryTokens < cost
      ) {
        throw failure;
      }
      this.retryTokens -= cost;
      const base = failure.$retryable?.throttling ? THROTTLING_BASE_DELAY_MS : BASE_DELAY_MS;
      const delay = Math.floor(Math.min(MAX_DELAY_MS, this.random() * base * 2 ** (attempt - 1)));
      totalRetryDelay += delay;
      await this.sleep(delay);
    }
  }

  /** Believes the server's `Date` when it is more than five minutes from our clock; true when it changed. */
  private learnClockOffset(date: string | undefined): boolean {
    const serverTime = date === undefined ? Number.NaN : Date.parse(date);
    if (Number.isNaN(serverTime)) return false;
    const offset = serverTime - this.now();
    if (Math.abs(offset - this.clockOffsetMs) < CLOCK_SKEW_MS) return false;
    this.clockOffsetMs = offset;
    return true;
  }
}
