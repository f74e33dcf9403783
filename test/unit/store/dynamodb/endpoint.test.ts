import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { resolveEndpoint, resolveRegion } from '../../../../lib/store/dynamodb/endpoint.js';
import { DynamoDbConfigError } from '../../../../lib/store/errors.js';

const REGIONS = [
  'us-east-1',
  'eu-west-1',
  'ap-southeast-7',
  'il-central-1',
  'cn-north-1',
  'cn-northwest-1',
  'us-gov-west-1',
  'us-gov-east-1',
  'us-iso-east-1',
  'us-isob-east-1',
  'eu-isoe-west-1',
  'us-isof-south-1',
  'eusc-de-east-1',
];

describe('resolveEndpoint', () => {
  // The AWS SDK's DynamoDB endpoint rules (its endpointProvider) are the reference.
  const rules = new DynamoDBClient({ region: 'us-east-1' }).config.endpointProvider;

  it.each(REGIONS)(
    "matches the AWS SDK's endpoint rules in %s, plain, FIPS, dual-stack and both",
    (region) => {
      for (const fips of [false, true]) {
        for (const dualStack of [false, true]) {
          const env = {
            ...(fips ? { AWS_USE_FIPS_ENDPOINT: 'true' } : {}),
            ...(dualStack ? { AWS_USE_DUALSTACK_ENDPOINT: 'true' } : {}),
          };
          const sdk = rules({ Region: region, UseFIPS: fips, UseDualStack: dualStack });
          expect(
            resolveEndpoint(undefined, region, env).href,
            `${region} fips=${fips} dualStack=${dualStack}`,
          ).toBe(sdk.url.href);
        }
      }
    },
  );

  it('sends to DynamoDB Local for the region `local`, as the SDK does', () => {
    expect(resolveEndpoint(undefined, 'local', {}).href).toBe(rules({ Region: 'local' }).url.href);
  });

  it('prefers the given endpoint, then AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL', () => {
    const env = {
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
    };
    expect(resolveEndpoint('https://ddb.example.com', 'eu-west-1', env).href).toBe(
      'https://ddb.example.com/',
    );
    expect(resolveEndpoint(undefined, 'eu-west-1', env).href).toBe('http://127.0.0.1:8000/');
    expect(resolveEndpoint(undefined, 'eu-west-1', { AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }).href).toBe(
      'http://127.0.0.1:4566/',
    );
  });

  it('ignores the configured endpoint URLs with AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true', () => {
    const env = { AWS_ENDPOINT_URL: 'http://127.0.0.1:4566', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' };
    expect(resolveEndpoint(undefined, 'eu-west-1', env).href).toBe(
      'https://dynamodb.eu-west-1.amazonaws.com/',
    );
  });

  it.each([
    ['not a URL', 'dynamodb local', /is not a URL/],
    ['a host without a scheme', 'localhost:8000', /must be an http:\/\/ or https:\/\/ URL/],
    ['another scheme', 'ftp://example.com', /must be an http:\/\/ or https:\/\/ URL/],
    [
      'with a path',
      'http://127.0.0.1:8000/dynamodb',
      /must be a scheme, host and port only \(e\.g\. http:\/\/127\.0\.0\.1:8000\)/,
    ],
    ['with a query', 'https://ddb.example.com/?x=1', /must be a scheme, host and port only/],
    ['with credentials in it', 'https://user:secret@ddb.example.com', /must be a scheme, host and port only/],
  ])('refuses an endpoint that is %s, naming it', (_what, endpoint, message) => {
    expect(() => resolveEndpoint(endpoint, 'eu-west-1', {})).toThrow(DynamoDbConfigError);
    expect(() => resolveEndpoint(endpoint, 'eu-west-1', {})).toThrow(message);
  });

  it('never repeats a password given in the endpoint URL', () => {
    expect(() => resolveEndpoint('https://user:s3cr3t@ddb.example.com', 'eu-west-1', {})).toThrow(
      /^DynamoDB endpoint must be a scheme, host and port only \(e\.g\. https:\/\/ddb\.example\.com\)$/,
    );
  });
});

describe('resolveRegion', () => {
  it('takes the option, then AWS_REGION, then AWS_DEFAULT_REGION', () => {
    expect(resolveRegion('eu-west-1', { AWS_REGION: 'us-east-1' })).toBe('eu-west-1');
    expect(resolveRegion(undefined, { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'eu-west-2' })).toBe(
      'us-east-1',
    );
    expect(resolveRegion(undefined, { AWS_DEFAULT_REGION: 'eu-west-2' })).toBe('eu-west-2');
  });

  it('says which variable to set when no region is configured', () => {
    expect(() => resolveRegion(undefined, {})).toThrow(/set AWS_REGION/);
  });

  it('refuses a region that is not a host-name label (it becomes part of the endpoint)', () => {
    expect(() => resolveRegion('eu-west-1.evil.example', {})).toThrow(DynamoDbConfigError);
    expect(() => resolveRegion('EU-WEST-1', {})).toThrow(/is not a region name/);
  });
});
