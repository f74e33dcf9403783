/**
 * SigV4 signing of API requests for an IAM-authorized API Gateway (`execute-api`), with credentials from
 * the standard AWS chain (environment, profiles, SSO, container and instance roles).
 *
 * @module
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

/** AWS credentials (the shape of the SDK's `AwsCredentialIdentity`). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** A request about to be sent. */
export interface OutgoingRequest {
  method: string;
  url: URL;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body?: string;
}

/** Adds authentication headers to a request. */
export interface RequestSigner {
  /** Returns the headers to send: the given ones plus the signature's (never `host`: fetch sets it). */
  sign(request: OutgoingRequest): Promise<Record<string, string>>;
}

/** Options of {@link createSigV4Signer}. */
export interface SigV4SignerOptions {
  region: string;
  /** Static credentials or a provider; the Node default chain (optionally for `profile`) when omitted. */
  credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
  /** Profile for the default chain. */
  profile?: string;
  /** `execute-api` unless told. */
  service?: string;
  /** Signing time; `new Date()` unless told (tests pin it). */
  clock?: () => Date;
}

function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return query;
}

/**
 * A SigV4 signer for `execute-api` built on `@smithy/signature-v4`. It signs every header it is given plus
 * `host` and `x-amz-date` (and `x-amz-security-token` for temporary credentials); the path is encoded
 * again as SigV4 requires for every service but S3, so a path segment sent as `q%3Aname` is signed as
 * `q%253Aname`. No `x-amz-content-sha256` header is added (API Gateway does not need it).
 *
 * @example
 * ```ts
 * const signer = createSigV4Signer({ region: 'us-east-1' });
 * const headers = await signer.sign({ method: 'GET', url: new URL('https://abc.execute-api.us-east-1.amazonaws.com/prod/v1/apps'), headers: {} });
 * ```
 */
export function createSigV4Signer(options: SigV4SignerOptions): RequestSigner {
  const credentials =
    options.credentials ??
    fromNodeProviderChain(options.profile === undefined ? {} : { profile: options.profile });
  const signer = new SignatureV4({
    service: options.service ?? 'execute-api',
    region: options.region,
    credentials,
    sha256: Sha256,
    applyChecksum: false,
    uriEscapePath: true,
  });
  const clock = options.clock ?? (() => new Date());
  return {
    async sign(request) {
      const { url } = request;
      const toSign = new HttpRequest({
        method: request.method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port === '' ? {} : { port: Number(url.port) }),
        path: url.pathname,
        query: queryOf(url),
        headers: { ...request.headers, host: url.host },
        ...(request.body === undefined ? {} : { body: request.body }),
      });
      const signed = await signer.sign(toSign, { signingDate: clock() });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(signed.headers)) {
        if (name.toLowerCase() !== 'host') headers[name.toLowerCase()] = value;
      }
      return headers;
    },
  };
}
