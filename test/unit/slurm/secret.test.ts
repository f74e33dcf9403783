/** The deployed functions' read of the Slurm JWT key from Secrets Manager (GetSecretValue, the SDK's client). */
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import 'aws-sdk-client-mock-vitest/extend';
import { readSecretBytes, secretRegion, secretsClient } from '../../../functions/schedulers/secret.js';
import { slurmAuth } from '../../../functions/schedulers/slurm.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:slurm-jwt-AbCdEf';
const secrets = mockClient(SecretsManagerClient);

afterEach(() => {
  secrets.reset();
});

describe('readSecretBytes', () => {
  it('asks GetSecretValue for the secret, in its own region, and decodes a base64 SecretString', async () => {
    const key = Buffer.alloc(32, 5);
    secrets
      .on(GetSecretValueCommand, { SecretId: ARN })
      .resolves({ SecretString: `${key.toString('base64')}\n` });
    const client = secretsClient(ARN);
    expect(await client.config.region()).toBe('eu-west-1');
    expect(await readSecretBytes(ARN, client)).toEqual(key);
    expect(secrets).toHaveReceivedCommandExactlyOnceWith(GetSecretValueCommand, { SecretId: ARN });
  });

  it('returns SecretBinary as it is and reports a failure with the secret and the reason', async () => {
    secrets.on(GetSecretValueCommand).resolvesOnce({ SecretBinary: Buffer.from('abc') });
    expect((await readSecretBytes(ARN, secretsClient(ARN))).toString()).toBe('abc');
    secrets.on(GetSecretValueCommand).rejects(
      new ResourceNotFoundException({
        message: "Secrets Manager can't find the specified secret.",
        $metadata: { httpStatusCode: 400 },
      }),
    );
    await expect(readSecretBytes(ARN, secretsClient(ARN))).rejects.toThrow(
      /GetSecretValue on .*slurm-jwt-AbCdEf failed: ResourceNotFoundException: Secrets Manager can't find/,
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
    expect(secrets.calls()).toHaveLength(0);
  });

  it('reads the secret through a client it registers, when the key is first loaded', async () => {
    const key = Buffer.alloc(32, 7);
    secrets.on(GetSecretValueCommand, { SecretId: ARN }).resolves({ SecretString: key.toString('base64') });
    const registered: unknown[] = [];
    const auth = slurmAuth({ jwtKeySecretArn: ARN }, (client) => {
      registered.push(client);
      return client;
    }) as { jwtKey: () => Promise<Buffer> };
    expect(await auth.jwtKey()).toEqual(key);
    expect(registered).toHaveLength(1);
    expect(registered[0]).toBeInstanceOf(SecretsManagerClient);
  });
});
