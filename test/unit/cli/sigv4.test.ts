import { describe, expect, it } from 'vitest';
import { createSigV4Signer } from '../../../lib/cli/index.js';

// The expected signatures below were computed independently with botocore 1.43.11 (Python), not with the
// code under test:
//
//   from unittest import mock; import datetime, botocore.auth
//   from botocore.auth import SigV4Auth; from botocore.awsrequest import AWSRequest
//   from botocore.credentials import Credentials
//   creds = Credentials('AKIDEXAMPLE', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', token_or_None)
//   req = AWSRequest(method=..., url=..., headers={...}, data=body)
//   with mock.patch.object(botocore.auth, 'get_current_datetime',
//                          return_value=datetime.datetime(2026, 1, 15, 12, 30, 45)):
//       SigV4Auth(creds, 'execute-api', 'us-east-1').add_auth(req)
//   print(req.headers['Authorization'])
//
// The first case is AWS's published SigV4 test-suite vector "get-vanilla" (service "service").
const ACCESS_KEY = 'AKIDEXAMPLE';
const SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const HOST = 'abc123defg.execute-api.us-east-1.amazonaws.com';
const AT = new Date('2026-01-15T12:30:45Z');
const CREDENTIAL = 'Credential=AKIDEXAMPLE/20260115/us-east-1/execute-api/aws4_request';

describe('createSigV4Signer', () => {
  it("reproduces AWS's get-vanilla test vector", async () => {
    const signer = createSigV4Signer({
      region: 'us-east-1',
      service: 'service',
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      clock: () => new Date('2015-08-30T12:36:00Z'),
    });
    const headers = await signer.sign({
      method: 'GET',
      url: new URL('https://example.amazonaws.com/'),
      headers: {},
    });
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, ' +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
  });

  it('signs a GET of an app whose id holds an encoded colon as botocore does (path encoded twice)', async () => {
    const signer = createSigV4Signer({
      region: 'us-east-1',
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      clock: () => AT,
    });
    const headers = await signer.sign({
      method: 'GET',
      url: new URL(`https://${HOST}/prod/v1/apps/aws_batch/gpu-queue%3Atrain-k3x9?refresh=true`),
      headers: { accept: 'application/json' },
    });
    expect(headers.authorization).toBe(
      `AWS4-HMAC-SHA256 ${CREDENTIAL}, SignedHeaders=accept;host;x-amz-date, ` +
        'Signature=b451f87065244c16f2247ec245e7b3ce04b82d8f612cd8afb03fb3413b3ec149',
    );
    expect(headers.host).toBeUndefined();
  });

  it('signs repeated query parameters as botocore does', async () => {
    const signer = createSigV4Signer({
      region: 'us-east-1',
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      clock: () => AT,
    });
    const headers = await signer.sign({
      method: 'GET',
      url: new URL(`https://${HOST}/prod/v1/apps?state=RUNNING&state=PENDING&limit=10`),
      headers: { accept: 'application/json' },
    });
    expect(headers.authorization).toBe(
      `AWS4-HMAC-SHA256 ${CREDENTIAL}, SignedHeaders=accept;host;x-amz-date, ` +
        'Signature=ade110f2013ef9916a4498f9795b1c6e5d997dd003c6680f2665d65195e5f46e',
    );
  });

  it('signs a POST body with temporary credentials, adding the security token', async () => {
    const signer = createSigV4Signer({
      region: 'us-east-1',
      credentials: async () => ({
        accessKeyId: ACCESS_KEY,
        secretAccessKey: SECRET_KEY,
        sessionToken: 'FwoGZXIvYXdzEXAMPLETOKEN',
      }),
      clock: () => AT,
    });
    const headers = await signer.sign({
      method: 'POST',
      url: new URL(`https://${HOST}/prod/v1/apps`),
      headers: { accept: 'application/json', 'content-type': 'application/json', 'idempotency-key': 'k-1' },
      body: '{"scheduler":"aws_batch","component":"utils.echo","args":["--msg","hi"]}',
    });
    expect(headers.authorization).toBe(
      `AWS4-HMAC-SHA256 ${CREDENTIAL}, ` +
        'SignedHeaders=accept;content-type;host;idempotency-key;x-amz-date;x-amz-security-token, ' +
        'Signature=822f45215119d63dfa3c7b7bb2bb075d889ab3386fa5af024fcb07125b1c0889',
    );
    expect(headers['x-amz-security-token']).toBe('FwoGZXIvYXdzEXAMPLETOKEN');
    expect(headers['idempotency-key']).toBe('k-1');
  });
});
