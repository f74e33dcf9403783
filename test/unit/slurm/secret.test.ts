/** The deployed functions' read of the Slurm JWT key from Secrets Manager (a SigV4-signed GetSecretValue). */
import { describe, expect, it } from 'vitest';
import { readSecretBytes, secretRegion } from '../../../functions/schedulers/secret.js';
import { slurmAuth } from '../../../functions/schedulers/slurm.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:slurm-jwt-AbCdEf';
const credentials = async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' });

function fakeSecretsManager(status: number, body: unknown) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetchImpl = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify(body), { status });
  }) as typeof fetch;
  return { fetchImpl, calls };
}

describe('readSecretBytes', () => {
  it('calls GetSecretValue in the secret’s region, signed, and decodes a base64 SecretString', async () => {
    const key = Buffer.alloc(32, 5);
    const { fetchImpl, calls } = fakeSecretsManager(200, { SecretString: `${key.toString('base64')}\n` });
    expect(await readSecretBytes(ARN, fetchImpl, credentials)).toEqual(key);
    expect(calls[0]?.url).toBe('https://secretsmanager.eu-west-1.amazonaws.com/');
    const headers = calls[0]?.init.headers as Record<string, string>;
    expect(headers['x-amz-target']).toBe('secretsmanager.GetSecretValue');
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request/,
    );
    expect(JSON.parse(String(calls[0]?.init.body))).toEqual({ SecretId: ARN });
  });

  it('decodes SecretBinary and reports a refusal with the ARN', async () => {
    const binary = fakeSecretsManager(200, { SecretBinary: Buffer.from('abc').toString('base64') });
    expect((await readSecretBytes(ARN, binary.fetchImpl, credentials)).toString()).toBe('abc');
    const denied = fakeSecretsManager(400, { __type: 'AccessDeniedException', message: 'not authorized' });
    await expect(readSecretBytes(ARN, denied.fetchImpl, credentials)).rejects.toThrow(
      /slurm-jwt-AbCdEf.*not authorized/,
    );
    expect(() => secretRegion('nope')).toThrow(/not a Secrets Manager secret ARN/);
  });
});

describe('slurmAuth', () => {
  it('uses a token as it is, decodes a base64 key, and reads a secret only when a token is first needed', () => {
    expect(slurmAuth({ token: 't' })).toEqual({ token: 't' });
    expect(slurmAuth({ jwtKeyBase64: Buffer.from('k').toString('base64') })).toEqual({
      jwtKey: Buffer.from('k'),
    });
    const fromSecret = slurmAuth({ jwtKeySecretArn: ARN });
    expect(typeof (fromSecret as { jwtKey: unknown }).jwtKey).toBe('function');
  });
});
