/**
 * The bearer token an EKS cluster accepts for an IAM identity, built as `aws eks get-token` builds it: a
 * presigned STS `GetCallerIdentity` URL for the cluster's region, valid 60 s, that also signs the
 * `x-k8s-aws-id: <cluster name>` header; the token is `k8s-aws-v1.` + the URL in unpadded base64url. The
 * cluster's authenticator calls the URL to learn who the caller is. No AWS call is made here.
 *
 * @module
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

/** AWS credentials (the shape of the SDK's `AwsCredentialIdentity`). */
export interface EksCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** What an EKS token is made from. */
export interface EksTokenInput {
  clusterName: string;
  region: string;
  /** Credentials, or the SDK's provider of them (e.g. `fromNodeProviderChain()`). */
  credentials: EksCredentials | (() => Promise<EksCredentials>);
  /** Signing time; now by default. */
  signingDate?: Date;
}

/** Prefix of every EKS bearer token. */
export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
/** Seconds the presigned URL is valid (awscli's `URL_TIMEOUT`). */
export const EKS_TOKEN_URL_SECONDS = 60;
/** The header that binds the token to one cluster. */
export const EKS_CLUSTER_HEADER = 'x-k8s-aws-id';

/**
 * The presigned STS URL an EKS token carries.
 *
 * @example
 * ```ts
 * await eksPresignedUrl({ clusterName: 'training', region: 'us-west-2', credentials });
 * // 'https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Algorithm=...'
 * ```
 */
export async function eksPresignedUrl(input: EksTokenInput): Promise<string> {
  const hostname = `sts.${input.region}.amazonaws.com`;
  const signer = new SignatureV4({
    service: 'sts',
    region: input.region,
    credentials: input.credentials,
    sha256: Sha256,
    applyChecksum: false,
  });
  const request = new HttpRequest({
    method: 'GET',
    protocol: 'https:',
    hostname,
    path: '/',
    query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    headers: { host: hostname, [EKS_CLUSTER_HEADER]: input.clusterName },
  });
  const signed = await signer.presign(request, {
    expiresIn: EKS_TOKEN_URL_SECONDS,
    signingDate: input.signingDate ?? new Date(),
  });
  const query = Object.entries(signed.query ?? {})
    .flatMap(([k, v]) =>
      (Array.isArray(v) ? v : [v]).map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(String(x))}`),
    )
    .sort()
    .join('&');
  return `https://${hostname}/?${query}`;
}

/**
 * An EKS bearer token (`k8s-aws-v1.<base64url of the presigned URL>`), as `aws eks get-token` prints in
 * `status.token`.
 *
 * @example
 * ```ts
 * const token = await eksToken({ clusterName: 'training', region: 'us-west-2', credentials: fromNodeProviderChain() });
 * ```
 */
export async function eksToken(input: EksTokenInput): Promise<string> {
  const url = await eksPresignedUrl(input);
  return EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url');
}
