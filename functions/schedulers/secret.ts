/**
 * Reads one Secrets Manager secret (`GetSecretValue`) with a SigV4-signed `fetch`, credentials from the
 * function's role (the SDK's default chain, which finds them in the function's environment). The project has no Secrets Manager SDK client; this one call does not
 * justify one.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

/** The region of a secret's ARN (`arn:aws:secretsmanager:<region>:…`). */
export function secretRegion(arn: string): string {
  const region = arn.split(':')[3];
  if (!arn.startsWith('arn:') || !region) throw new Error(`'${arn}' is not a Secrets Manager secret ARN`);
  return region;
}

/** The secret's bytes: `SecretBinary`, or `SecretString` read as base64 (how a 32-byte JWT key is stored). */
export async function readSecretBytes(
  arn: string,
  fetchImpl: typeof fetch = fetch,
  credentials = defaultProvider(),
): Promise<Buffer> {
  const region = secretRegion(arn);
  const hostname = `secretsmanager.${region}.amazonaws.com`;
  const request = new HttpRequest({
    method: 'POST',
    protocol: 'https:',
    hostname,
    path: '/',
    headers: {
      host: hostname,
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'secretsmanager.GetSecretValue',
    },
    body: JSON.stringify({ SecretId: arn }),
  });
  const signer = new SignatureV4({ service: 'secretsmanager', region, credentials, sha256: Sha256 });
  const signed = await signer.sign(request);
  const { host: _host, ...headers } = signed.headers;
  const response = await fetchImpl(`https://${hostname}/`, {
    method: 'POST',
    headers,
    body: signed.body as string,
  });
  const body = (await response.json()) as { SecretString?: string; SecretBinary?: string; message?: string };
  if (!response.ok) {
    throw new Error(
      `secretsmanager:GetSecretValue on ${arn} failed (HTTP ${response.status}): ${body.message ?? ''}`,
    );
  }
  if (body.SecretBinary !== undefined) return Buffer.from(body.SecretBinary, 'base64');
  return Buffer.from((body.SecretString ?? '').trim(), 'base64');
}
