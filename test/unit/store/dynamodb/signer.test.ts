import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { amzDate, signPost } from '../../../../lib/store/dynamodb/signer.js';

/** A small deterministic generator, so a failure names a reproducible case. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const ALPHABET = 'abcXYZ019 _-./+=:#%"\'\t\u00e9\u4e2d\u{1f600}';

function text(random: () => number, max: number): string {
  let out = '';
  const length = Math.floor(random() * max);
  for (let i = 0; i < length; i++) out += [...ALPHABET][Math.floor(random() * [...ALPHABET].length)];
  return out;
}

/** The AWS SDK's own signer on the same request (what the SDK's DynamoDB client would send). */
async function sdkSignature(input: Parameters<typeof signPost>[0]): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: input.service,
    region: input.region,
    credentials: input.credentials,
    sha256: Sha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: 'https:',
      hostname: input.host,
      path: '/',
      query: {},
      headers: { ...input.headers, host: input.host },
      body: input.body,
    },
    { signingDate: input.time },
  );
  return signed.headers;
}

describe('signPost', () => {
  it('signs exactly as the AWS SDK signer does, over 300 random requests', async () => {
    const random = generator(20261124);
    for (let i = 0; i < 300; i++) {
      const input = {
        host:
          random() < 0.5
            ? 'dynamodb.eu-west-1.amazonaws.com'
            : `127.0.0.1:${1024 + Math.floor(random() * 60000)}`,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': `DynamoDB_20120810.${['GetItem', 'Query', 'UpdateItem'][i % 3]}`,
          ...(random() < 0.3 ? { 'x-custom': `  spaced   ${text(random, 8)}  ` } : {}),
        },
        body: JSON.stringify({ TableName: text(random, 20), Key: { pk: { S: text(random, 200) } } }),
        region: ['us-east-1', 'eu-west-1', 'cn-north-1', 'local'][i % 4] as string,
        service: 'dynamodb',
        credentials: {
          accessKeyId: `AKIA${i}`,
          secretAccessKey: text(random, 40) || 'secret',
          ...(random() < 0.7 ? { sessionToken: `token/${text(random, 30)}+=` } : {}),
        },
        time: new Date(Date.UTC(2026, 10, 24) + Math.floor(random() * 400 * 86_400_000)),
      };
      const ours = signPost(input);
      const sdk = await sdkSignature(input);
      expect(ours.authorization, `case ${i}`).toBe(sdk.authorization);
      expect(ours['x-amz-date'], `case ${i}`).toBe(sdk['x-amz-date']);
      expect(ours['x-amz-security-token'], `case ${i}`).toBe(sdk['x-amz-security-token']);
    }
  });

  it('leaves the security token out for long-term credentials and signs host and the target', () => {
    const headers = signPost({
      host: 'dynamodb.us-east-1.amazonaws.com',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem' },
      body: '{}',
      region: 'us-east-1',
      service: 'dynamodb',
      credentials: {
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      },
      time: new Date('2026-11-24T01:02:03.456Z'),
    });
    expect(headers['x-amz-security-token']).toBeUndefined();
    expect(headers['x-amz-date']).toBe('20261124T010203Z');
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261124\/us-east-1\/dynamodb\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=[0-9a-f]{64}$/,
    );
  });

  it('formats the signing time as ISO 8601 basic, in UTC', () => {
    expect(amzDate(new Date('2027-01-02T03:04:05.999Z'))).toBe('20270102T030405Z');
  });
});
