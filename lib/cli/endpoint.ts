/**
 * Which API the CLI talks to and whether its requests are SigV4-signed.
 *
 * @module
 */
import type { TxsConfig } from './config.js';
import { UsageError } from './errors.js';
import type { CliIO } from './io.js';

/** The local server started by `npm start`. */
export const DEFAULT_ENDPOINT = 'http://127.0.0.1:8080';

/** Where the endpoint setting came from, for messages. */
export type EndpointSource = '--endpoint' | 'TXS_ENDPOINT' | '.txsconfig' | 'default';

/** The resolved connection settings. */
export interface EndpointSettings {
  /** Base URL without a trailing slash, e.g. `https://abc.execute-api.us-east-1.amazonaws.com/prod`. */
  url: string;
  source: EndpointSource;
  /** Sign requests with SigV4 for `execute-api`. */
  sign: boolean;
  /** Signing region (when `sign`). */
  region: string | undefined;
  /** AWS profile for credentials (`--profile`, `AWS_PROFILE`, `[txs] profile`); the SDK chain otherwise. */
  profile: string | undefined;
}

const EXECUTE_API_HOST = /^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/i;

/**
 * The region of an API Gateway default endpoint host (`{api}.execute-api.{region}.amazonaws.com`), or
 * undefined for any other host.
 *
 * @example
 * ```ts
 * executeApiRegion('abc123.execute-api.eu-west-1.amazonaws.com'); // 'eu-west-1'
 * ```
 */
export function executeApiRegion(host: string): string | undefined {
  return EXECUTE_API_HOST.exec(host)?.[1]?.toLowerCase();
}

function parseFlag(value: string, name: string): boolean | 'auto' {
  const lowered = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(lowered)) return true;
  if (['0', 'false', 'no', 'off'].includes(lowered)) return false;
  if (lowered === 'auto' || lowered === '') return 'auto';
  throw new UsageError(`${name}=${value} is not one of 1, 0, true, false, auto`);
}

/**
 * Resolves the endpoint: `--endpoint`, then `TXS_ENDPOINT`, then `[txs] endpoint` in `.txsconfig`, then
 * the local server. Requests are signed when the host is an `execute-api` host, or when `TXS_SIGV4=1` /
 * `[txs] sigv4 = true` (custom domain names); `TXS_SIGV4=0` turns signing off. The signing region is the
 * host's, else `--region`, `[txs] region`, `AWS_REGION`, `AWS_DEFAULT_REGION`.
 *
 * @throws UsageError when the URL is not http(s) or signing is on without a region.
 */
export function resolveEndpoint(
  options: { endpoint?: string; profile?: string; region?: string },
  config: TxsConfig,
  io: Pick<CliIO, 'env'>,
): EndpointSettings {
  let raw: string;
  let source: EndpointSource;
  if (options.endpoint !== undefined && options.endpoint !== '') {
    raw = options.endpoint;
    source = '--endpoint';
  } else if (io.env.TXS_ENDPOINT !== undefined && io.env.TXS_ENDPOINT !== '') {
    raw = io.env.TXS_ENDPOINT;
    source = 'TXS_ENDPOINT';
  } else if (config.get('txs', 'endpoint') !== undefined) {
    raw = config.get('txs', 'endpoint') ?? '';
    source = '.txsconfig';
  } else {
    raw = DEFAULT_ENDPOINT;
    source = 'default';
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(
      `endpoint ${raw} (from ${source}) is not a URL`,
      'give the API base URL, e.g. http://127.0.0.1:8080 or https://abc123.execute-api.us-east-1.amazonaws.com/prod',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`endpoint ${raw} (from ${source}) must be an http:// or https:// URL`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw new UsageError(`endpoint ${raw} (from ${source}) must not have a query or fragment`);
  }
  const hostRegion = executeApiRegion(url.hostname);
  const flagText = io.env.TXS_SIGV4 ?? config.get('txs', 'sigv4');
  const flag = flagText === undefined ? 'auto' : parseFlag(flagText, 'TXS_SIGV4 / [txs] sigv4');
  const sign = flag === 'auto' ? hostRegion !== undefined : flag;
  const region =
    hostRegion ??
    nonEmpty(options.region) ??
    nonEmpty(config.get('txs', 'region')) ??
    nonEmpty(io.env.AWS_REGION) ??
    nonEmpty(io.env.AWS_DEFAULT_REGION);
  if (sign && region === undefined) {
    throw new UsageError(
      `cannot sign requests to ${url.host}: no AWS region`,
      'set --region, [txs] region in .txsconfig, or AWS_REGION',
    );
  }
  const profile =
    nonEmpty(options.profile) ?? nonEmpty(io.env.AWS_PROFILE) ?? nonEmpty(config.get('txs', 'profile'));
  return { url: url.href.replace(/\/+$/, ''), source, sign, region, profile };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
