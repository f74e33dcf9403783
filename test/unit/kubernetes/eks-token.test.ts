/**
 * EKS tokens against references made by botocore the way `aws eks get-token` makes them
 * (test/fixtures/kubernetes/eks-token.py, fixed credentials and clock).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EKS_TOKEN_PREFIX, eksPresignedUrl, eksToken } from '../../../lib/schedulers/kubernetes/eks-token.js';

interface Reference {
  cluster: string;
  region: string;
  access_key: string;
  secret_key: string;
  token: string | null;
  now: string;
  url: string;
  bearer: string;
}

const references = JSON.parse(
  readFileSync(new URL('../../fixtures/kubernetes/eks-token.json', import.meta.url), 'utf8'),
) as Reference[];

function inputOf(r: Reference) {
  return {
    clusterName: r.cluster,
    region: r.region,
    credentials: {
      accessKeyId: r.access_key,
      secretAccessKey: r.secret_key,
      ...(r.token === null ? {} : { sessionToken: r.token }),
    },
    signingDate: new Date(r.now),
  };
}

function params(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url).searchParams.entries());
}

describe('eksToken', () => {
  for (const r of references) {
    it(`signs the same STS GetCallerIdentity URL as aws eks get-token (${r.region}${r.token ? ', session token' : ''})`, async () => {
      const url = await eksPresignedUrl(inputOf(r));
      expect(new URL(url).origin).toBe(new URL(r.url).origin);
      expect(params(url)).toEqual(params(r.url));
    });

    it(`encodes it as k8s-aws-v1. + unpadded base64url (${r.region})`, async () => {
      const token = await eksToken(inputOf(r));
      expect(token.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
      expect(token).not.toMatch(/[=+/]/);
      const decoded = Buffer.from(token.slice(EKS_TOKEN_PREFIX.length), 'base64url').toString('utf8');
      expect(params(decoded)).toEqual(params(r.url));
    });
  }

  it('binds the token to its cluster: another cluster name gives another signature', async () => {
    const r = references[0] as Reference;
    const a = params(await eksPresignedUrl(inputOf(r)));
    const b = params(await eksPresignedUrl({ ...inputOf(r), clusterName: 'other' }));
    expect(a['X-Amz-SignedHeaders']).toBe('host;x-k8s-aws-id');
    expect(b['X-Amz-Signature']).not.toBe(a['X-Amz-Signature']);
  });
});
