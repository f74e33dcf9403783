/**
 * Sending a workspace archive to a presigned upload URL: streamed from its file over the real wire (a
 * loopback server standing in for S3, which answers as S3 does: `BadDigest` when the bytes do not hash to the
 * signed `x-amz-checksum-sha256`), with exactly the answer's headers and none of the caller's; S3's refusals
 * as errors that say what happened and what to do.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ExitCode, UsageError } from '../../../../lib/cli/errors.js';
import type { HttpExchange } from '../../../../lib/cli/http-transport.js';
import { putArchive } from '../../../../lib/cli/workspace/upload.js';
import type { WorkspaceUpload } from '../../../../lib/specs/api.js';

const s3Error = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>4442587FB7D0A2F9</RequestId><HostId>h</HostId></Error>`;

/** What the stand-in S3 received. */
const received: { headers: IncomingHttpHeaders; bytes: Buffer }[] = [];
let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'txs-upload-'));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      received.push({ headers: req.headers, bytes });
      const pinned = req.headers['x-amz-checksum-sha256'];
      if (createHash('sha256').update(bytes).digest('base64') !== pinned) {
        res.writeHead(400, { 'content-type': 'application/xml' });
        res.end(s3Error('BadDigest', 'The SHA256 you specified did not match the calculated checksum.'));
        return;
      }
      res.writeHead(200, { etag: '"e"' });
      res.end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((ok) => server.close(ok));
  await rm(dir, { recursive: true, force: true });
});

function uploadFor(bytes: Buffer, path = '/bucket/workspaces/o/a.tar.gz'): WorkspaceUpload {
  return {
    method: 'PUT',
    url: `${base}${path}?X-Amz-Signature=abc`,
    headers: {
      'content-length': String(bytes.length),
      'x-amz-checksum-sha256': createHash('sha256').update(bytes).digest('base64'),
      'x-amz-meta-file-count': '3',
    },
    expiresAt: new Date(Date.now() + 900_000).toISOString(),
  };
}

describe('putArchive', () => {
  it('streams the archive from its file with exactly the upload’s headers, and none of the caller’s', async () => {
    const archive = join(dir, 'a.tar.gz');
    const bytes = Buffer.alloc(3 * 1024 * 1024, 7);
    await writeFile(archive, bytes);
    received.length = 0;
    await putArchive(uploadFor(bytes), () => createReadStream(archive, { highWaterMark: 64 * 1024 }), {
      endpoint: 'http://127.0.0.1:8080',
    });
    expect(received).toHaveLength(1);
    expect(received[0]?.bytes.equals(bytes)).toBe(true);
    expect(received[0]?.headers).toMatchObject({
      'content-length': String(bytes.length),
      'x-amz-meta-file-count': '3',
    });
    expect(received[0]?.headers.authorization).toBeUndefined();
    expect(received[0]?.headers['transfer-encoding']).toBeUndefined();
  });

  it('reports S3’s BadDigest for other bytes as the archive not being what was signed, with the fix', async () => {
    const signedFor = Buffer.from('the archive that was packed');
    const error = await putArchive(
      uploadFor(signedFor),
      () => Readable.from([Buffer.from('the archive that was PACKED')]),
      {
        endpoint: 'http://127.0.0.1:8080',
        maxRetries: 0,
      },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      apiCode: 'BadDigest',
      requestId: '4442587FB7D0A2F9',
      exitCode: ExitCode.USAGE,
      retryable: false,
    });
    expect((error as ApiError).message).toMatch(
      /not the archive the upload URL was signed for.*nothing was stored/,
    );
    expect((error as ApiError).hint).toContain('txs/workspaces');
  });

  it('says an expired URL is expired, and that a new run asks for a new one', async () => {
    const upload = { ...uploadFor(Buffer.from('x')), url: 'https://b.s3.us-east-1.amazonaws.com/w/a.tar.gz' };
    const error = await putArchive(upload, () => Readable.from([Buffer.from('x')]), {
      endpoint: 'https://api.example.com/prod',
      transport: async () => ({
        status: 403,
        header: () => undefined,
        text: s3Error('AccessDenied', 'Request has expired'),
      }),
    }).catch((e: unknown) => e);
    expect((error as ApiError).message).toContain('the upload URL expired');
    expect((error as ApiError).hint).toContain('run again');
  });

  it('retries a 5xx with the stream opened anew, then succeeds', async () => {
    const bodies: string[] = [];
    let calls = 0;
    await putArchive(uploadFor(Buffer.from('abc')), () => Readable.from([Buffer.from('abc')]), {
      endpoint: 'http://127.0.0.1:8080',
      sleep: async () => {},
      transport: async (exchange: HttpExchange) => {
        const open = exchange.body as () => Readable;
        const chunks: Buffer[] = [];
        for await (const chunk of open()) chunks.push(chunk as Buffer);
        bodies.push(Buffer.concat(chunks).toString());
        calls += 1;
        return calls === 1
          ? {
              status: 503,
              header: () => undefined,
              text: s3Error('SlowDown', 'Please reduce your request rate.'),
            }
          : { status: 200, header: () => undefined, text: '' };
      },
    });
    expect(bodies).toEqual(['abc', 'abc']);
  });

  it('refuses an http upload URL from an https endpoint, and sends nothing', async () => {
    received.length = 0;
    const error = await putArchive(uploadFor(Buffer.from('x')), () => Readable.from([Buffer.from('x')]), {
      endpoint: 'https://api.example.com/prod',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain('not https');
    expect(received).toEqual([]);
  });
});
