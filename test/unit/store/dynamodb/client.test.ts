import { describe, expect, it } from 'vitest';
import { ItemClient, type ItemClientOptions } from '../../../../lib/store/dynamodb/client.js';
import type { WireRequest, WireResponse } from '../../../../lib/store/dynamodb/transport.js';
import { DynamoDbServiceError } from '../../../../lib/store/errors.js';

const T0 = Date.UTC(2026, 10, 24, 1, 2, 3);

function errorResponse(status: number, type: string, message = `${type} (test)`, headers = {}): WireResponse {
  return {
    statusCode: status,
    headers: { 'x-amzn-requestid': 'REQ', ...headers },
    body: JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }),
  };
}

const ok = (body: object = {}): WireResponse => ({
  statusCode: 200,
  headers: { 'x-amzn-requestid': 'OK' },
  body: JSON.stringify(body),
});

/** A client whose transport answers from `answers` in turn (an Error is thrown as a transport failure). */
function scripted(answers: (WireResponse | Error)[], options: ItemClientOptions = {}) {
  const requests: WireRequest[] = [];
  const delays: number[] = [];
  const client = new ItemClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'token' },
    random: () => 1,
    now: () => T0,
    sleep: async (ms) => {
      delays.push(ms);
    },
    transport: async (request) => {
      requests.push(request);
      const answer = answers.shift();
      if (answer === undefined) throw new Error('no answer scripted');
      if (answer instanceof Error) throw answer;
      return answer;
    },
    ...options,
  });
  return { client, requests, delays };
}

const networkError = (code: string) => Object.assign(new Error(`socket ${code}`), { code });

describe('ItemClient requests', () => {
  it("sends a signed JSON 1.0 POST to the region's endpoint with the operation as the target", async () => {
    const { client, requests } = scripted([ok({ Item: { pk: { S: 'a' }, n: { N: '7' } } })]);
    const { Item } = await client.get({ TableName: 't', Key: { pk: 'a' } });
    expect(Item).toEqual({ pk: 'a', n: 7 });
    const [request] = requests;
    expect(request?.url.href).toBe('https://dynamodb.eu-west-1.amazonaws.com/');
    expect(request?.headers).toMatchObject({
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.GetItem',
      host: 'dynamodb.eu-west-1.amazonaws.com',
      'x-amz-date': '20261124T010203Z',
      'x-amz-security-token': 'token',
    });
    expect(request?.headers.authorization).toContain(
      'Credential=AKID/20261124/eu-west-1/dynamodb/aws4_request',
    );
    expect(JSON.parse(request?.body ?? '')).toEqual({ TableName: 't', Key: { pk: { S: 'a' } } });
  });

  it('marshals keys, items and expression values, leaving undefined attributes out', async () => {
    const { client, requests } = scripted([ok(), ok({ Items: [], Count: 0, ScannedCount: 0 })]);
    await client.put({
      TableName: 't',
      Item: { pk: 'a', gone: undefined, list: [1, 'x'], nested: { flag: true, none: null } },
      ConditionExpression: 'attribute_not_exists(pk) OR #e <= :now',
      ExpressionAttributeNames: { '#e': 'expiresAt' },
      ExpressionAttributeValues: { ':now': 5 },
    });
    await client.query({
      TableName: 't',
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'a' },
      ExclusiveStartKey: { pk: 'a', sk: 'b' },
    });
    expect(JSON.parse(requests[0]?.body ?? '')).toEqual({
      TableName: 't',
      Item: {
        pk: { S: 'a' },
        list: { L: [{ N: '1' }, { S: 'x' }] },
        nested: { M: { flag: { BOOL: true }, none: { NULL: true } } },
      },
      ConditionExpression: 'attribute_not_exists(pk) OR #e <= :now',
      ExpressionAttributeNames: { '#e': 'expiresAt' },
      ExpressionAttributeValues: { ':now': { N: '5' } },
    });
    expect(JSON.parse(requests[1]?.body ?? '')).toMatchObject({
      ExpressionAttributeValues: { ':pk': { S: 'a' } },
      ExclusiveStartKey: { pk: { S: 'a' }, sk: { S: 'b' } },
    });
  });

  it('returns a Query page with plain items and its LastEvaluatedKey', async () => {
    const { client } = scripted([
      ok({ Items: [{ pk: { S: 'a' } }], Count: 1, ScannedCount: 2, LastEvaluatedKey: { pk: { S: 'a' } } }),
    ]);
    const page = await client.query({ TableName: 't', KeyConditionExpression: 'pk = :pk' });
    expect(page).toMatchObject({
      Items: [{ pk: 'a' }],
      Count: 1,
      ScannedCount: 2,
      LastEvaluatedKey: { pk: 'a' },
    });
    expect(page.$metadata).toEqual({ httpStatusCode: 200, requestId: 'OK', attempts: 1, totalRetryDelay: 0 });
  });

  it('asks a credentials provider before each request (so refreshed credentials are used)', async () => {
    let calls = 0;
    const { client, requests } = scripted([ok(), ok()], {
      credentials: async () => ({ accessKeyId: `KEY${++calls}`, secretAccessKey: 's' }),
    });
    await client.get({ TableName: 't', Key: { pk: 'a' } });
    await client.get({ TableName: 't', Key: { pk: 'a' } });
    expect(requests.map((r) => /Credential=(\w+)\//.exec(r.headers.authorization ?? '')?.[1])).toEqual([
      'KEY1',
      'KEY2',
    ]);
    expect(requests[0]?.headers['x-amz-security-token']).toBeUndefined();
  });

  it('names the variables to set when the environment has no credentials', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    try {
      const { client, requests } = scripted([], { credentials: undefined });
      const error = await client.get({ TableName: 't', Key: { pk: 'a' } }).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
      expect(requests).toHaveLength(0);
    } finally {
      if (saved.id !== undefined) process.env.AWS_ACCESS_KEY_ID = saved.id;
      if (saved.secret !== undefined) process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    }
  });

  it('runs middleware around each call with the command name and the response metadata', async () => {
    const { client } = scripted([errorResponse(500, 'InternalServerError'), ok()]);
    const seen: unknown[] = [];
    client.middlewareStack.add((next, context) => async (args) => {
      const result = await next(args);
      seen.push({ command: context.commandName, metadata: result.output.$metadata });
      return result;
    });
    await client.delete({ TableName: 't', Key: { pk: 'a' } });
    expect(seen).toEqual([
      {
        command: 'DeleteItemCommand',
        metadata: { httpStatusCode: 200, requestId: 'OK', attempts: 2, totalRetryDelay: 100 },
      },
    ]);
  });
});

describe('ItemClient errors', () => {
  it("throws DynamoDB's exception by name, with its message, status and request id, without retrying", async () => {
    const { client, requests } = scripted([
      errorResponse(400, 'ConditionalCheckFailedException', 'The conditional request failed'),
    ]);
    const error = await client
      .update({
        TableName: 't',
        Key: { pk: 'a' },
        UpdateExpression: 'SET a = :a',
        ExpressionAttributeValues: { ':a': 1 },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DynamoDbServiceError);
    expect(error).toMatchObject({
      name: 'ConditionalCheckFailedException',
      message: 'The conditional request failed',
      $fault: 'client',
      $metadata: { httpStatusCode: 400, requestId: 'REQ', attempts: 1 },
    });
    expect(requests).toHaveLength(1);
  });

  it('reads the code and message of an XML error (as emulators and some proxies answer)', async () => {
    const xml =
      '<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message></Error></ErrorResponse>';
    const { client } = scripted([{ statusCode: 403, headers: {}, body: xml }]);
    await expect(client.call('GetItem', {})).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
      message: 'The request signature we calculated does not match',
      $metadata: { httpStatusCode: 403 },
    });
  });

  it('names an error response without a JSON body by its status', async () => {
    const { client } = scripted([{ statusCode: 413, headers: {}, body: '<html>too large</html>' }]);
    const error = await client.call('PutItem', {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'UnknownError', $metadata: { httpStatusCode: 413 } });
    expect((error as Error).message).toBe('DynamoDB PutItem answered HTTP 413');
  });
});

describe('ItemClient retries (the AWS SDK standard mode)', () => {
  it('retries a 5xx with exponential back-off and succeeds', async () => {
    const { client, requests, delays } = scripted([
      errorResponse(500, 'InternalServerError'),
      errorResponse(503, 'ServiceUnavailable'),
      ok(),
    ]);
    const output = await client.get({ TableName: 't', Key: { pk: 'a' } });
    expect(requests).toHaveLength(3);
    expect(delays).toEqual([100, 200]);
    expect(output.$metadata).toMatchObject({ attempts: 3, totalRetryDelay: 300 });
  });

  it('backs off longer for throttling and gives up after three attempts with the last error', async () => {
    const { client, delays } = scripted([
      errorResponse(400, 'ProvisionedThroughputExceededException'),
      errorResponse(400, 'ThrottlingException'),
      errorResponse(400, 'ProvisionedThroughputExceededException', 'still throttled'),
    ]);
    const error = await client.get({ TableName: 't', Key: { pk: 'a' } }).catch((e: unknown) => e);
    expect(delays).toEqual([500, 1000]);
    expect(error).toMatchObject({
      name: 'ProvisionedThroughputExceededException',
      message: 'still throttled',
      $retryable: { throttling: true },
      $metadata: { attempts: 3, totalRetryDelay: 1500 },
    });
  });

  it('draws the back-off with full jitter', async () => {
    const { client, delays } = scripted([errorResponse(500, 'InternalServerError'), ok()], {
      random: () => 0.25,
    });
    await client.get({ TableName: 't', Key: { pk: 'a' } });
    expect(delays).toEqual([25]);
  });

  it('retries a request that got no response (reset, refused, timed out)', async () => {
    const { client, requests } = scripted([networkError('ECONNRESET'), networkError('ETIMEDOUT'), ok()]);
    await client.get({ TableName: 't', Key: { pk: 'a' } });
    expect(requests).toHaveLength(3);
  });

  it('reports a request that never got a response as a server-side fault with its Node.js code', async () => {
    const { client } = scripted([networkError('ECONNREFUSED')], { maxAttempts: 1 });
    const error = await client.get({ TableName: 't', Key: { pk: 'a' } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ECONNREFUSED', $fault: 'server', $metadata: { attempts: 1 } });
    expect((error as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('does not retry client errors or failures that are not network failures', async () => {
    const validation = scripted([errorResponse(400, 'ValidationException'), ok()]);
    await expect(validation.client.call('Query', {})).rejects.toMatchObject({ name: 'ValidationException' });
    expect(validation.requests).toHaveLength(1);
    const bug = scripted([new TypeError('bad header'), ok()]);
    await expect(bug.client.call('Query', {})).rejects.toBeInstanceOf(TypeError);
    expect(bug.requests).toHaveLength(1);
  });

  it("re-signs with the server's clock after a clock-skew error, once", async () => {
    const serverTime = new Date(T0 + 60 * 60 * 1000);
    const { client, requests, delays } = scripted([
      errorResponse(400, 'InvalidSignatureException', 'Signature expired', {
        date: serverTime.toUTCString(),
      }),
      ok(),
      ok(),
    ]);
    await client.get({ TableName: 't', Key: { pk: 'a' } });
    await client.get({ TableName: 't', Key: { pk: 'a' } });
    expect(requests.map((r) => r.headers['x-amz-date'])).toEqual([
      '20261124T010203Z',
      '20261124T020203Z',
      '20261124T020203Z',
    ]);
    expect(delays).toHaveLength(1);
  });

  it('does not retry a signature error when the clocks agree (the credentials are wrong)', async () => {
    const { client, requests } = scripted([
      errorResponse(400, 'InvalidSignatureException', 'bad signature', { date: new Date(T0).toUTCString() }),
      ok(),
    ]);
    await expect(client.call('GetItem', {})).rejects.toMatchObject({ name: 'InvalidSignatureException' });
    expect(requests).toHaveLength(1);
  });

  it('stops retrying when the retry quota is spent, and earns it back with successes', async () => {
    const failures = Array.from({ length: 400 }, () => errorResponse(500, 'InternalServerError'));
    const { client, requests } = scripted(failures);
    // 500 tokens, 5 per retry: 100 retries over 100 calls, then each call is tried once.
    for (let i = 0; i < 150; i++) await client.call('GetItem', {}).catch(() => undefined);
    expect(requests).toHaveLength(150 + 100);
  });

  it('makes one attempt with maxAttempts 1', async () => {
    const { client, requests } = scripted([errorResponse(500, 'InternalServerError'), ok()], {
      maxAttempts: 1,
    });
    await expect(client.call('GetItem', {})).rejects.toMatchObject({ name: 'InternalServerError' });
    expect(requests).toHaveLength(1);
  });
});
