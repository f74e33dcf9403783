/**
 * Where {@link ItemClient} sends its requests and which region it signs for, resolved once from options and
 * the environment, as the AWS SDK resolves them: `AWS_ENDPOINT_URL_DYNAMODB`, then `AWS_ENDPOINT_URL` (both
 * ignored with `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`), else the regional endpoint of the region's
 * partition, FIPS with `AWS_USE_FIPS_ENDPOINT=true`, dual-stack with `AWS_USE_DUALSTACK_ENDPOINT=true`. The
 * tests compare every regional endpoint with the SDK's own endpoint rules.
 *
 * @module
 */
import { DynamoDbConfigError } from '../errors.js';

/** A partition's DNS suffixes. */
interface Partition {
  /** Region names it holds. */
  regions: RegExp;
  dnsSuffix: string;
  dualStackDnsSuffix: string;
}

/** AWS partitions, most specific first (the SDK's partitions.json, for the names DynamoDB serves). */
const PARTITIONS: readonly Partition[] = [
  { regions: /^cn-/, dnsSuffix: 'amazonaws.com.cn', dualStackDnsSuffix: 'api.amazonwebservices.com.cn' },
  { regions: /^us-gov-/, dnsSuffix: 'amazonaws.com', dualStackDnsSuffix: 'api.aws' },
  { regions: /^us-iso-/, dnsSuffix: 'c2s.ic.gov', dualStackDnsSuffix: 'api.aws.ic.gov' },
  { regions: /^us-isob-/, dnsSuffix: 'sc2s.sgov.gov', dualStackDnsSuffix: 'api.aws.scloud' },
  { regions: /^eu-isoe-/, dnsSuffix: 'cloud.adc-e.uk', dualStackDnsSuffix: 'api.cloud-aws.adc-e.uk' },
  { regions: /^us-isof-/, dnsSuffix: 'csp.hci.ic.gov', dualStackDnsSuffix: 'api.aws.hci.ic.gov' },
  { regions: /^eusc-/, dnsSuffix: 'amazonaws.eu', dualStackDnsSuffix: 'api.amazonwebservices.eu' },
  { regions: /^/, dnsSuffix: 'amazonaws.com', dualStackDnsSuffix: 'api.aws' },
];

/** A valid region name: what may be put into a host name. */
const REGION_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

function envFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  return env[name]?.trim().toLowerCase() === 'true';
}

/**
 * The region to sign for: `region`, else `AWS_REGION` (always set in Lambda), else `AWS_DEFAULT_REGION`.
 *
 * @throws DynamoDbConfigError when none is set or the name is not a region name.
 */
export function resolveRegion(region: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const resolved = region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (resolved === undefined || resolved === '') {
    throw new DynamoDbConfigError('DynamoDB region: set AWS_REGION (or pass `region`)');
  }
  if (!REGION_NAME.test(resolved)) {
    throw new DynamoDbConfigError(`DynamoDB region '${resolved}' is not a region name (e.g. eu-west-1)`);
  }
  return resolved;
}

/**
 * The endpoint for `region`: `endpoint` when given, else the configured endpoint URL, else the regional one.
 *
 * @throws DynamoDbConfigError for an endpoint that is not an http(s) URL.
 * @example
 * ```ts
 * resolveEndpoint(undefined, 'eu-west-1', {}).href; // 'https://dynamodb.eu-west-1.amazonaws.com/'
 * ```
 */
export function resolveEndpoint(
  endpoint: string | undefined,
  region: string,
  env: NodeJS.ProcessEnv = process.env,
): URL {
  const configured = envFlag(env, 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS')
    ? undefined
    : env.AWS_ENDPOINT_URL_DYNAMODB || env.AWS_ENDPOINT_URL || undefined;
  const given = endpoint ?? configured;
  if (given !== undefined) {
    let url: URL;
    try {
      url = new URL(given);
    } catch {
      throw new DynamoDbConfigError(`DynamoDB endpoint '${given}' is not a URL (e.g. http://localhost:8000)`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new DynamoDbConfigError(`DynamoDB endpoint '${given}' must be an http:// or https:// URL`);
    }
    // Requests are signed for `POST /`: an endpoint with a path, a query or credentials in it would not work.
    if (url.pathname !== '/' || url.search !== '' || url.username !== '' || url.password !== '') {
      // Not echoed: it may carry a password.
      throw new DynamoDbConfigError(
        `DynamoDB endpoint must be a scheme, host and port only (e.g. ${url.protocol}//${url.host})`,
      );
    }
    return url;
  }
  // As the SDK's rules: the region `local` is DynamoDB Local's default address.
  if (region === 'local') return new URL('http://localhost:8000');
  const partition = PARTITIONS.find((p) => p.regions.test(region)) as Partition;
  const fips = envFlag(env, 'AWS_USE_FIPS_ENDPOINT');
  const dualStack = envFlag(env, 'AWS_USE_DUALSTACK_ENDPOINT');
  const suffix = dualStack ? partition.dualStackDnsSuffix : partition.dnsSuffix;
  // GovCloud's regional DynamoDB endpoints are FIPS endpoints already.
  const service = fips && !(region.startsWith('us-gov-') && !dualStack) ? 'dynamodb-fips' : 'dynamodb';
  return new URL(`https://${service}.${region}.${suffix}`);
}
