/**
 * AWS Signature Version 4 for the requests {@link ItemClient} sends: `POST /` with a JSON body, no query
 * string, and a handful of headers. Only that shape is supported, which keeps the canonical request simple
 * enough to read at a glance; the tests check every signature against the AWS SDK's own signer
 * (`@smithy/signature-v4`) over random inputs.
 *
 * @module
 */
import { createHash, createHmac } from 'node:crypto';

/** AWS credentials: the role's keys Lambda puts in the environment, or any other provider's. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Present for temporary credentials (always, in Lambda). */
  sessionToken?: string;
}

/** What a signature covers. */
export interface SignatureInput {
  /** The `host` header's value (host, and port when not the scheme's default). */
  host: string;
  /** Headers to sign besides `host`, `x-amz-date` and `x-amz-security-token` (lower-case names). */
  headers: Readonly<Record<string, string>>;
  /** The request body (UTF-8). */
  body: string;
  region: string;
  /** The signing name of the service (`dynamodb`). */
  service: string;
  credentials: AwsCredentials;
  /** The signing time. */
  time: Date;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function hmac(key: string | Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest();
}

/** `20261124T013000Z` for a time. */
export function amzDate(time: Date): string {
  return time
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** A header value as SigV4 canonicalizes it: trimmed, inner runs of spaces collapsed. */
function canonicalValue(value: string): string {
  return value.trim().replace(/\s+/g, ' ');
}

/** The key a day's signatures are made with; derived once per day, region and service for each secret. */
const signingKeys = new Map<string, Buffer>();

function signingKey(secretAccessKey: string, day: string, region: string, service: string): Buffer {
  const cacheKey = `${secretAccessKey}\n${day}\n${region}\n${service}`;
  let key = signingKeys.get(cacheKey);
  if (key === undefined) {
    key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), service), 'aws4_request');
    if (signingKeys.size >= 16) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
}

/**
 * Signs a `POST /` request.
 *
 * @returns the headers to send: `input.headers`, `host`, `x-amz-date`, `x-amz-security-token` (with a
 *   session token) and `authorization`.
 * @example
 * ```ts
 * const headers = signPost({
 *   host: 'dynamodb.eu-west-1.amazonaws.com', body, region: 'eu-west-1', service: 'dynamodb',
 *   headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem' },
 *   credentials, time: new Date(),
 * });
 * ```
 */
export function signPost(input: SignatureInput): Record<string, string> {
  const date = amzDate(input.time);
  const day = date.slice(0, 8);
  const headers: Record<string, string> = { ...input.headers, host: input.host, 'x-amz-date': date };
  if (input.credentials.sessionToken !== undefined && input.credentials.sessionToken !== '') {
    headers['x-amz-security-token'] = input.credentials.sessionToken;
  }
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    'POST',
    '/',
    '',
    ...names.map((name) => `${name}:${canonicalValue(headers[name] ?? '')}`),
    '',
    signedHeaders,
    sha256Hex(input.body),
  ].join('\n');
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const stringToSign = [ALGORITHM, date, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = signingKey(input.credentials.secretAccessKey, day, input.region, input.service);
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  headers.authorization =
    `${ALGORITHM} Credential=${input.credentials.accessKeyId}/${scope}, ` +
    `SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}
