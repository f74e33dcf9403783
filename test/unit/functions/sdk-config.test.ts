/**
 * The SDK client configuration of the functions (functions/shared/sdk-config.ts): in Lambda, the settings the
 * environment leaves unset get the SDK's defaults instead of a read of the shared config files; what the
 * environment sets (FIPS, dual-stack, endpoints, retries) behaves as the SDK's own loaders make it behave.
 * Checked on real clients: the endpoint a request is sent to, and the settings the client resolves.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BatchClient, ListJobsCommand } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { sdkClientConfig, serviceEndpointVariable } from '../../../functions/shared/sdk-config.js';

const LAMBDA = { AWS_LAMBDA_FUNCTION_NAME: 'txs-Run', AWS_REGION: 'us-east-1' };

/** A shared config file that, if the SDK read it, would change every setting the tests look at. */
const CONFIG_FILE = [
  '[default]',
  'region = eu-west-3',
  'use_fips_endpoint = true',
  'use_dualstack_endpoint = true',
  'max_attempts = 7',
  'retry_mode = adaptive',
  'endpoint_url = http://from-the-config-file.invalid',
  'disable_clock_skew_correction = true',
  'sigv4a_signing_region_set = eu-*',
  '',
].join('\n');

let home: string;

beforeAll(() => {
  home = mkdtempSync(path.join(tmpdir(), 'txs-sdk-config-'));
  mkdirSync(path.join(home, '.aws'));
  writeFileSync(path.join(home, '.aws', 'config'), CONFIG_FILE);
});

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

const ENV_NAMES = [
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_PROFILE',
  'AWS_CONFIG_FILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_USE_FIPS_ENDPOINT',
  'AWS_USE_DUALSTACK_ENDPOINT',
  'AWS_MAX_ATTEMPTS',
  'AWS_RETRY_MODE',
  'AWS_DEFAULTS_MODE',
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_BATCH',
  'AWS_ENDPOINT_URL_CLOUDWATCH_LOGS',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
];

beforeEach(() => {
  for (const name of ENV_NAMES) vi.stubEnv(name, undefined);
  vi.stubEnv('HOME', home);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

class Sent extends Error {}

/** The URL `client`'s first request is sent to (the request is stopped before the network). */
async function urlOfFirstRequest(client: BatchClient | CloudWatchLogsClient): Promise<string> {
  let url = '';
  const stack = client.middlewareStack as unknown as {
    add(middleware: () => (args: { request: unknown }) => Promise<never>, options: object): void;
  };
  stack.add(
    () => async (args) => {
      const request = args.request as { protocol: string; hostname: string; port?: number };
      url = `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ''}`;
      throw new Sent();
    },
    { step: 'finalizeRequest', priority: 'low', name: 'stopBeforeSending' },
  );
  const sent =
    client instanceof BatchClient
      ? client.send(new ListJobsCommand({ jobQueue: 'q' }))
      : client.send(new GetLogEventsCommand({ logGroupName: 'g', logStreamName: 's' }));
  await expect(sent).rejects.toBeInstanceOf(Sent);
  return url;
}

/** The retry mode `client` resolved (`standard` or `adaptive`). */
async function retryModeOf(client: BatchClient): Promise<string | undefined> {
  return ((await client.config.retryStrategy()) as { mode?: string }).mode;
}

describe('sdkClientConfig (the functions’ SDK clients)', () => {
  it('in Lambda, gives every setting the environment leaves unset the SDK default, and reads no config file', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', LAMBDA.AWS_LAMBDA_FUNCTION_NAME);
    vi.stubEnv('AWS_REGION', LAMBDA.AWS_REGION);
    const config = sdkClientConfig('Batch');
    expect(config).toMatchObject({
      region: 'us-east-1',
      useFipsEndpoint: false,
      useDualstackEndpoint: false,
      maxAttempts: 3,
      retryMode: 'standard',
      defaultsMode: 'legacy',
      authSchemePreference: [],
      ignoreConfiguredEndpointUrls: true,
    });
    const client = new BatchClient(config);
    expect(await client.config.maxAttempts()).toBe(3);
    expect(await retryModeOf(client)).toBe('standard');
    expect(await client.config.useFipsEndpoint()).toBe(false);
    expect(await client.config.userAgentAppId()).toBeUndefined();
    expect(await client.config.disableClockSkewCorrection()).toBe(false);
    const events = new EventBridgeClient(sdkClientConfig('EventBridge'));
    expect(await events.config.sigv4aSigningRegionSet()).toBeUndefined();
    expect(await events.config.useDualstackEndpoint()).toBe(false);
    // The config file's region, FIPS, dual-stack and endpoint_url would all show in the URL.
    expect(await urlOfFirstRequest(client)).toBe('https://batch.us-east-1.amazonaws.com');
  });

  it('outside Lambda, or where a profile or config file is named, leaves every setting to the SDK loaders', async () => {
    expect(sdkClientConfig('Batch', { AWS_REGION: 'us-east-1' })).toEqual({});
    for (const name of ['AWS_PROFILE', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE']) {
      expect(sdkClientConfig('Batch', { ...LAMBDA, [name]: 'x' }), name).toEqual({});
    }
    // Local mode: the SDK reads the shared config file (which is why Lambda must not need to).
    const client = new BatchClient(sdkClientConfig('Batch'));
    expect(await client.config.region()).toBe('eu-west-3');
    expect(await client.config.useFipsEndpoint()).toBe(true);
    expect(await client.config.maxAttempts()).toBe(7);
    expect(await retryModeOf(client)).toBe('adaptive');
    expect(await client.config.disableClockSkewCorrection()).toBe(true);
  });

  it('in Lambda, leaves FIPS, dual-stack, retries and the defaults mode to the SDK when the environment sets them', async () => {
    const env = {
      ...LAMBDA,
      AWS_USE_FIPS_ENDPOINT: 'true',
      AWS_USE_DUALSTACK_ENDPOINT: 'true',
      AWS_MAX_ATTEMPTS: '5',
      AWS_RETRY_MODE: 'adaptive',
      AWS_DEFAULTS_MODE: 'standard',
    };
    const config = sdkClientConfig('Batch', env);
    for (const key of [
      'useFipsEndpoint',
      'useDualstackEndpoint',
      'maxAttempts',
      'retryMode',
      'defaultsMode',
    ]) {
      expect(config, key).not.toHaveProperty(key);
    }
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    const client = new BatchClient(sdkClientConfig('Batch'));
    expect(await client.config.maxAttempts()).toBe(5);
    expect(await retryModeOf(client)).toBe('adaptive');
    expect(await urlOfFirstRequest(client)).toBe('https://batch-fips.us-east-1.api.aws');
  });

  it('in Lambda, sends to the endpoint the environment configures: the service’s own variable first', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', LAMBDA.AWS_LAMBDA_FUNCTION_NAME);
    vi.stubEnv('AWS_REGION', LAMBDA.AWS_REGION);
    vi.stubEnv('AWS_ENDPOINT_URL', 'http://127.0.0.1:4566');
    vi.stubEnv('AWS_ENDPOINT_URL_CLOUDWATCH_LOGS', 'http://127.0.0.1:4567');
    expect(serviceEndpointVariable('CloudWatch Logs')).toBe('AWS_ENDPOINT_URL_CLOUDWATCH_LOGS');
    expect(await urlOfFirstRequest(new BatchClient(sdkClientConfig('Batch')))).toBe('http://127.0.0.1:4566');
    expect(await urlOfFirstRequest(new CloudWatchLogsClient(sdkClientConfig('CloudWatch Logs')))).toBe(
      'http://127.0.0.1:4567',
    );
    // AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is the SDK's to apply.
    vi.stubEnv('AWS_IGNORE_CONFIGURED_ENDPOINT_URLS', 'true');
    expect(sdkClientConfig('Batch')).not.toHaveProperty('endpoint');
    expect(await urlOfFirstRequest(new BatchClient(sdkClientConfig('Batch')))).toBe(
      'https://batch.us-east-1.amazonaws.com',
    );
  });
});
