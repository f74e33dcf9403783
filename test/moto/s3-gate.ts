/**
 * A loopback gate in front of moto's S3 that checks presigned PUTs the way S3 does and moto 5.2 does not:
 * the query-string signature, recomputed by botocore from the request as received (presigned-put-check.py:
 * another language's SigV4, so the JavaScript signer is not checked against itself), and the body against
 * every checksum it names (`x-amz-checksum-sha256` or `-crc32`, as a header or in the URL). A refused PUT
 * gets S3's answer (`403 SignatureDoesNotMatch`, `400 BadDigest`) and never reaches moto; everything else is
 * passed to moto unchanged.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { MOTO_CREDENTIALS, MOTO_REGION } from './constants.js';

const CHECK = fileURLToPath(new URL('./presigned-put-check.py', import.meta.url));
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/** A running gate: its URL (what the SDK's endpoint is set to) and what it refused. */
export interface S3Gate {
  readonly url: string;
  /** The S3 error codes of the PUTs refused, in order. */
  readonly refused: string[];
  /** Every request received, as `METHOD /path` (without the query), in order. */
  readonly received: string[];
  close(): Promise<void>;
}

/** The checksums S3 verifies that the gate verifies too, base64 as in `x-amz-checksum-<algorithm>`. */
const CHECKSUMS: Record<string, (body: Buffer) => string> = {
  sha256: (body) => createHash('sha256').update(body).digest('base64'),
  crc32: (body) => {
    const digest = Buffer.alloc(4);
    digest.writeUInt32BE(crc32(body));
    return digest.toString('base64');
  },
};

const s3Error = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>gate</RequestId></Error>`;

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Whether botocore finds the presigned signature valid for the request as received. */
async function signatureValid(req: IncomingMessage): Promise<boolean> {
  const url = `http://${req.headers.host}${req.url}`;
  const { stdout } = await promisify(execFile)(process.env.TXS_MOTO_PYTHON ?? 'python3', [
    CHECK,
    url,
    MOTO_CREDENTIALS.accessKeyId,
    MOTO_CREDENTIALS.secretAccessKey,
    MOTO_REGION,
    JSON.stringify(req.headers),
  ]);
  return stdout.trim() === 'valid';
}

async function handle(moto: string, gate: S3Gate, req: IncomingMessage, res: ServerResponse) {
  const { refused } = gate;
  gate.received.push(`${req.method} ${new URL(req.url ?? '/', 'http://gate').pathname}`);
  const body = await bodyOf(req);
  const refuse = (status: number, code: string, message: string) => {
    refused.push(code);
    res.writeHead(status, { 'content-type': 'application/xml' });
    res.end(s3Error(code, message));
  };
  if (req.method === 'PUT' && req.url?.includes('X-Amz-Signature=')) {
    if (!(await signatureValid(req))) {
      return refuse(
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided.',
      );
    }
    // S3 checks every checksum a PUT names, in a header or in the URL (as newer SDKs presign a CRC32).
    const query = new URL(req.url, 'http://gate').searchParams;
    for (const [algorithm, digest] of Object.entries(CHECKSUMS)) {
      const name = `x-amz-checksum-${algorithm}`;
      const pinned = req.headers[name] ?? query.get(name) ?? undefined;
      if (pinned !== undefined && digest(body) !== pinned) {
        return refuse(
          400,
          'BadDigest',
          `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`,
        );
      }
    }
  }
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([name]) => !HOP_BY_HOP.has(name)) as [string, string][],
  );
  const answer = await fetch(`${moto}${req.url}`, {
    method: req.method ?? 'GET',
    headers,
    ...(body.length > 0 ? { body } : {}),
  });
  const answerBody = Buffer.from(await answer.arrayBuffer());
  res.writeHead(answer.status, Object.fromEntries(answer.headers));
  res.end(req.method === 'HEAD' ? undefined : answerBody);
}

/** Starts a gate on a free loopback port in front of moto at `moto`. */
export async function startS3Gate(moto: string): Promise<S3Gate> {
  const gate: S3Gate = { url: '', refused: [], received: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    handle(moto, gate, req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return Object.assign(gate, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  });
}
