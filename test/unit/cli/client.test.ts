import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { errorResponse } from '../../../functions/shared/http-errors.js';
import {
  ApiError,
  AppNotFoundError,
  AuthError,
  apiErrorFrom,
  EndpointUnreachableError,
  ExitCode,
  networkErrorCode,
  TxsClient,
  UsageError,
} from '../../../lib/cli/index.js';
import { BackendNotConfiguredError } from '../../../lib/schedulers/errors.js';
import { apiError, closedPort, type StubServer, startStubServer } from './helpers.js';

let stub: StubServer | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const noSleep = async () => undefined;

describe('TxsClient requests', () => {
  it('encodes the app id of a handle as one path segment, under the endpoint stage path', async () => {
    stub = await startStubServer(() => ({ body: { handle: 'h', status: { state: 'RUNNING' } } }));
    const client = new TxsClient({ endpoint: `${stub.url}/prod/`, sleep: noSleep });
    await client.getApp('aws_batch://torchx/gpu-queue:train-k3x9', { refresh: true });
    expect(stub.requests[0]?.path).toBe('/prod/v1/apps/aws_batch/gpu-queue%3Atrain-k3x9');
    expect(stub.requests[0]?.query.get('refresh')).toBe('true');
  });

  it('sends repeated state filters and omits unset query parameters', async () => {
    stub = await startStubServer(() => ({ body: { apps: [] } }));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    await client.listApps({ states: ['RUNNING', 'PENDING'], limit: 10 });
    const query = stub.requests[0]?.query;
    expect(query?.getAll('state')).toEqual(['RUNNING', 'PENDING']);
    expect(query?.get('limit')).toBe('10');
    expect(query?.has('scheduler')).toBe(false);
  });

  it('posts runs as JSON with the Idempotency-Key and extra headers', async () => {
    stub = await startStubServer(() => ({ status: 201, body: { handle: 'local_cwd://torchx/echo-1' } }));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep, headers: { 'X-Txs-User': 'alice' } });
    const body = { scheduler: 'local_cwd', component: 'utils.echo', args: ['--msg', 'hi'] };
    await client.run(body, 'key-1');
    const request = stub.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.body).toEqual(body);
    expect(request?.headers['idempotency-key']).toBe('key-1');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['x-txs-user']).toBe('alice');
  });

  it('sends the headers the signer returns', async () => {
    stub = await startStubServer(() => ({ body: { schedulers: [] } }));
    const client = new TxsClient({
      endpoint: stub.url,
      sleep: noSleep,
      signer: {
        sign: async (r) => ({ ...r.headers, authorization: `signed ${r.method} ${r.url.pathname}` }),
      },
    });
    await client.schedulers();
    expect(stub.requests[0]?.headers.authorization).toBe('signed GET /v1/schedulers');
  });

  it('retries a run the server says is still in progress, with the same key, then returns its handle', async () => {
    let calls = 0;
    stub = await startStubServer(() => {
      calls += 1;
      return calls === 1
        ? {
            status: 409,
            body: { error: { code: 'IdempotencyInProgress', message: 'still submitting', retryable: true } },
            headers: { 'retry-after': '1' },
          }
        : { status: 201, body: { handle: 'local_cwd://torchx/echo-1' } };
    });
    const sleeps: number[] = [];
    const client = new TxsClient({ endpoint: stub.url, sleep: async (ms) => void sleeps.push(ms) });
    const result = await client.run({ scheduler: 'local_cwd', component: 'utils.echo', args: [] }, 'key-9');
    expect(result.handle).toBe('local_cwd://torchx/echo-1');
    expect(stub.requests.map((r) => r.headers['idempotency-key'])).toEqual(['key-9', 'key-9']);
    expect(sleeps).toEqual([1000]);
  });

  it('gives up on a 503 after the configured retries', async () => {
    stub = await startStubServer(() => apiError(503, 'BackendError', 'AWS throttled'));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep, maxRetries: 2 });
    const error = await client.schedulers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).exitCode).toBe(ExitCode.UNAVAILABLE);
    expect(stub.requests).toHaveLength(3);
  });

  it('does not retry a backend that is not configured: one POST, so at most one record, and exit 78', async () => {
    const answer = errorResponse(
      new BackendNotConfiguredError('batch:SubmitJob needs AWS credentials on the machine'),
      'req-1',
    );
    stub = await startStubServer(() => ({
      status: answer.statusCode,
      headers: answer.headers,
      body: JSON.parse(answer.body) as unknown,
    }));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    const error = await client
      .run({ scheduler: 'aws_batch', component: 'utils.echo', args: [] }, 'key-1')
      .catch((e: unknown) => e);
    expect((error as ApiError).apiCode).toBe('BackendNotConfigured');
    expect((error as ApiError).exitCode).toBe(ExitCode.CONFIG);
    expect((error as ApiError).hint).toMatch(/AWS_REGION/);
    expect(stub.requests).toHaveLength(1);
  });

  it('obeys the API when it marks a 503 not retryable, and retries it when it marks it retryable', async () => {
    for (const [retryable, requests] of [
      [false, 1],
      [true, 3],
    ] as const) {
      stub = await startStubServer(() => {
        const reply = apiError(503, 'BackendError', 'AWS said no');
        return { ...reply, body: { error: { ...(reply.body as { error: object }).error, retryable } } };
      });
      const client = new TxsClient({ endpoint: stub.url, sleep: noSleep, maxRetries: 2 });
      await expect(client.schedulers()).rejects.toBeInstanceOf(ApiError);
      expect(stub.requests).toHaveLength(requests);
      await stub.close();
      stub = undefined;
    }
  });

  it('does not retry a validation error', async () => {
    stub = await startStubServer(() => apiError(400, 'ValidationFailed', 'scheduler: is required'));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    await expect(client.schedulers()).rejects.toThrow('scheduler: is required');
    expect(stub.requests).toHaveLength(1);
  });

  it('rejects a malformed handle before sending anything', async () => {
    const client = new TxsClient({ endpoint: 'http://127.0.0.1:1', sleep: noSleep });
    await expect(client.getApp('echo-k3x9')).rejects.toBeInstanceOf(UsageError);
  });
});

describe('TxsClient failures', () => {
  it('explains a refused connection to the default endpoint with `npm start`', async () => {
    const port = await closedPort();
    const client = new TxsClient({
      endpoint: `http://127.0.0.1:${port}`,
      endpointSource: 'default',
      sleep: noSleep,
    });
    const error = (await client.schedulers().catch((e: unknown) => e)) as EndpointUnreachableError;
    expect(error).toBeInstanceOf(EndpointUnreachableError);
    expect(error.message).toBe(`cannot reach http://127.0.0.1:${port}: connection refused`);
    expect(error.hint).toContain('start it with `npm start`');
    expect(error.exitCode).toBe(ExitCode.UNAVAILABLE);
  });

  it('names the setting a refused non-default endpoint came from', async () => {
    const port = await closedPort();
    const client = new TxsClient({
      endpoint: `http://127.0.0.1:${port}`,
      endpointSource: 'TXS_ENDPOINT',
      sleep: noSleep,
    });
    const error = (await client.schedulers().catch((e: unknown) => e)) as EndpointUnreachableError;
    expect(error.hint).toContain('the endpoint comes from TXS_ENDPOINT');
  });

  it('turns a credentials failure of the signer into an auth error', async () => {
    const client = new TxsClient({
      endpoint: 'http://127.0.0.1:1',
      sleep: noSleep,
      signer: {
        sign: async () => {
          throw new Error('Could not load credentials from any providers');
        },
      },
    });
    const error = (await client.schedulers().catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toContain(
      'no usable AWS credentials (Could not load credentials from any providers)',
    );
    expect(error.exitCode).toBe(ExitCode.AUTH);
  });

  it('maps 404 UnknownApp to "unknown app <handle>" with exit code 3', async () => {
    stub = await startStubServer(() => apiError(404, 'UnknownApp', 'Unknown app = local_cwd://torchx/x'));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    const error = (await client.cancel('local_cwd://torchx/x').catch((e: unknown) => e)) as AppNotFoundError;
    expect(error).toBeInstanceOf(AppNotFoundError);
    expect(error.message).toBe('unknown app local_cwd://torchx/x');
    expect(error.hint).toContain('txs list');
    expect(error.exitCode).toBe(ExitCode.NOT_FOUND);
  });

  it('says the endpoint looks wrong when the answer is not the API (HTML 404)', async () => {
    stub = await startStubServer(() => ({ status: 404, text: '<html>nginx</html>' }));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    const error = (await client.schedulers().catch((e: unknown) => e)) as ApiError;
    expect(error.message).toBe(
      `unexpected answer from ${stub.url}: HTTP 404 (text/html) to GET /v1/schedulers`,
    );
    expect(error.hint).toContain('include the stage');
    expect(error.exitCode).toBe(ExitCode.UNAVAILABLE);
  });

  it('reports a 500 with its request id as a bug', async () => {
    stub = await startStubServer(() => apiError(500, 'InternalError', 'internal error'));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    const error = (await client.schedulers().catch((e: unknown) => e)) as ApiError;
    expect(error.message).toBe('the API failed: internal error (request id req-1)');
    expect(error.hint).toContain('bug');
  });
});

describe('TxsClient over node:http and node:https', () => {
  it('reports a redirect instead of following it, so a signed request never goes to another address', async () => {
    stub = await startStubServer((request) =>
      request.path === '/v1/schedulers'
        ? { status: 301, text: '', headers: { location: 'https://api.example.com/prod/v1/schedulers' } }
        : { body: { schedulers: [] } },
    );
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    const error = (await client.schedulers().catch((e: unknown) => e)) as EndpointUnreachableError;
    expect(error).toBeInstanceOf(EndpointUnreachableError);
    expect(error.message).toBe(
      `cannot reach ${stub.url}: the endpoint answered HTTP 301, a redirect to https://api.example.com/prod/v1/schedulers; txs follows no redirects`,
    );
    expect(error.hint).toContain('use the address it redirects to as the endpoint');
    expect(stub.requests.map((r) => r.path)).toEqual(['/v1/schedulers']);
  });

  it('gives up on a server that never answers after timeoutMs, retrying it as a lost answer', async () => {
    stub = await startStubServer(() => new Promise(() => undefined));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep, timeoutMs: 100, maxRetries: 1 });
    const error = (await client.schedulers().catch((e: unknown) => e)) as EndpointUnreachableError;
    expect(error).toBeInstanceOf(EndpointUnreachableError);
    expect(error.message).toContain('no answer within');
    expect(networkErrorCode(error.cause)).toBe('ETIMEDOUT');
    expect(stub.requests).toHaveLength(2);
  });

  it('decodes a UTF-8 answer whose characters are split across chunks', async () => {
    stub = await startStubServer(() => ({ body: { schedulers: [{ name: 'ł😀'.repeat(20_000) }] } }));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    const [scheduler] = await client.schedulers();
    expect(scheduler?.name).toBe('ł😀'.repeat(20_000));
  });

  it("takes the request id of an error from API Gateway's header when the body has none", async () => {
    stub = await startStubServer(() => ({
      status: 500,
      body: { error: { code: 'InternalError', message: 'internal error' } },
      headers: { 'X-Amzn-RequestId': 'gw-7' },
    }));
    const client = new TxsClient({ endpoint: stub.url, sleep: noSleep });
    const error = (await client.schedulers().catch((e: unknown) => e)) as ApiError;
    expect(error.message).toBe('the API failed: internal error (request id gw-7)');
  });

  it('speaks TLS to an https endpoint and explains a certificate it cannot trust', async () => {
    const fixtures = new URL('../../fixtures/tls/', import.meta.url);
    const server = createHttpsServer(
      {
        key: readFileSync(new URL('self-signed.key', fixtures)),
        cert: readFileSync(new URL('self-signed.crt', fixtures)),
      },
      (_req, res) => res.end('{}'),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const endpoint = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new TxsClient({ endpoint, endpointSource: '--endpoint', sleep: noSleep, maxRetries: 0 });
      const error = (await client.schedulers().catch((e: unknown) => e)) as EndpointUnreachableError;
      expect(error).toBeInstanceOf(EndpointUnreachableError);
      expect(error.message).toBe(`cannot reach ${endpoint}: TLS error: self-signed certificate`);
      expect(error.hint).toContain('right scheme');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('apiErrorFrom', () => {
  const base = {
    contentType: 'application/json',
    endpoint: 'https://abc.execute-api.us-east-1.amazonaws.com/prod',
    region: 'us-east-1',
    method: 'GET',
    path: '/prod/v1/apps',
  };
  const gateway = (status: number, message: string, signed = true) =>
    apiErrorFrom({ ...base, status, signed, bodyText: JSON.stringify({ message }) });

  it.each([
    ['Missing Authentication Token', false, /was not signed.*TXS_SIGV4=1/],
    ['Missing Authentication Token', true, /route that does not exist.*stage/],
    ['The security token included in the request is invalid.', true, /credentials are invalid or expired/],
    [
      'User: arn:aws:iam::1:user/bob is not authorized to perform: execute-api:Invoke on resource: arn:x',
      true,
      /needs execute-api:Invoke/,
    ],
    ['Signature expired: 20260115T120000Z is now earlier than 20260115T120500Z', true, /clock is off/],
    ['Credential should be scoped to a valid region. ', true, /signed for us-east-1.*--region/],
    ['The request signature we calculated does not match the signature you provided.', true, /secret key/],
  ])('explains an API Gateway 403 "%s" (signed: %s)', (message, signed, hint) => {
    const error = gateway(403, message, signed);
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toBe(`${base.endpoint} refused the request (HTTP 403): ${message}`);
    expect(error.hint).toMatch(hint);
    expect(error.exitCode).toBe(ExitCode.AUTH);
  });

  it.each([
    [401, 'Unauthorized', /own socket \(~\/\.txs\/local\/<port>\.sock\).*never sends its token over TCP/],
    [403, 'Forbidden', /loopback names.*127\.0\.0\.1/],
  ])('explains a local server %s (%s) with what txs does about it', (status, code, hint) => {
    const error = apiErrorFrom({
      ...base,
      endpoint: 'http://127.0.0.1:8080',
      status,
      signed: false,
      bodyText: JSON.stringify({ error: { code, message: 'refused' } }),
    });
    expect(error).toBeInstanceOf(AuthError);
    expect(error.hint).toMatch(hint);
  });

  it('keeps the code, message and field details of an API validation error', () => {
    const error = apiErrorFrom({
      ...base,
      status: 400,
      signed: false,
      bodyText: JSON.stringify(
        apiError(400, 'InvalidRunConfig', 'Required run option: queue, must be provided', [
          { path: 'cfg.queue', message: 'is required' },
        ]).body,
      ),
    }) as ApiError;
    expect(error.apiCode).toBe('InvalidRunConfig');
    expect(error.message).toBe('Required run option: queue, must be provided');
    expect(error.issues).toEqual([{ path: 'cfg.queue', message: 'is required' }]);
    expect(error.hint).toContain('txs runopts');
    expect(error.exitCode).toBe(ExitCode.USAGE);
  });

  it("keeps the API's own 403 refusals (host access, admin-only) with their fields, not as a credentials problem", () => {
    const error = apiErrorFrom({
      ...base,
      status: 403,
      signed: true,
      bodyText: JSON.stringify(
        apiError(403, 'HostAccessDenied', 'This deployment does not allow …', [
          { path: 'cfg.privileged', message: 'privileged containers are not allowed by this deployment' },
        ]).body,
      ),
    }) as ApiError;
    expect(error).not.toBeInstanceOf(AuthError);
    expect(error.apiCode).toBe('HostAccessDenied');
    expect(error.issues.map((i) => i.path)).toEqual(['cfg.privileged']);
    expect(error.hint).toContain('administrator');
    expect(error.exitCode).toBe(ExitCode.AUTH);
  });

  it('treats API Gateway throttling and timeouts as unavailable', () => {
    expect(gateway(429, 'Too Many Requests').exitCode).toBe(ExitCode.UNAVAILABLE);
    expect(gateway(504, 'Endpoint request timed out').message).toContain(
      'HTTP 504: Endpoint request timed out',
    );
  });
});

describe('networkErrorCode', () => {
  it("finds the code in fetch's cause chain, including aggregate errors", () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    });
    expect(networkErrorCode(refused)).toBe('ECONNREFUSED');
    const aggregate = new TypeError('fetch failed', {
      cause: new AggregateError([Object.assign(new Error('y'), { code: 'ENOTFOUND' })]),
    });
    expect(networkErrorCode(aggregate)).toBe('ENOTFOUND');
    expect(networkErrorCode(new DOMException('timed out', 'TimeoutError'))).toBe('ETIMEDOUT');
    expect(networkErrorCode(new Error('plain'))).toBeUndefined();
  });
});
