/**
 * Sending a workspace archive to an upload URL of `POST /v1/workspaces` that is not the API's own route: a
 * presigned S3 URL, pinned to the archive's length and SHA-256. The archive is streamed from its file (never
 * read whole into memory) with exactly the headers the answer lists and nothing of the caller's (no
 * credentials, no token: the URL carries its own authorization). S3's refusals become errors that say what
 * was refused and what to do.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import type { WorkspaceUpload } from '../../specs/api.js';
import { backoffDelay, sleep } from '../../specs/backoff.js';
import { RETRY_BACKOFF } from '../api-transport.js';
import { ApiError, EndpointUnreachableError, ExitCode, UsageError } from '../errors.js';
import { type HttpAnswer, type HttpTransport, nodeHttpTransport } from '../http-transport.js';

/** Options of {@link putArchive}. */
export interface PutArchiveOptions {
  /** The API endpoint the upload URL came from: an `http:` URL is accepted only from an `http:` endpoint. */
  endpoint: string;
  transport?: HttpTransport;
  sleep?: (ms: number) => Promise<void>;
  /** Longest wait for the connection to make progress (ms). @default 60 000 */
  idleTimeoutMs?: number;
  /** Attempts after the first for a lost connection or a 5xx. @default 3 */
  maxRetries?: number;
}

/** The S3 error codes that mean "these are not the bytes the URL was signed for". */
const MISMATCH_CODES = new Set([
  'BadDigest',
  'InvalidDigest',
  'XAmzContentSHA256Mismatch',
  'IncompleteBody',
  'RequestTimeout',
  'SignatureDoesNotMatch',
]);

/**
 * PUTs the archive `open()` streams to `upload.url` with `upload.headers`.
 *
 * @throws ApiError when S3 refuses it (its code: `BadDigest` when the bytes do not hash to the pinned
 *   SHA-256, `SignatureDoesNotMatch` for another length, `AccessDenied` for an expired URL); nothing is
 *   stored then. EndpointUnreachableError when S3 cannot be reached; UsageError for a URL not to be trusted.
 */
export async function putArchive(
  upload: WorkspaceUpload,
  open: () => Readable,
  options: PutArchiveOptions,
): Promise<void> {
  const url = new URL(upload.url);
  const fromHttp = new URL(options.endpoint).protocol === 'http:';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && fromHttp)) {
    throw new UsageError(
      `the server answered an upload URL that is not https (${url.protocol}//${url.host}); nothing was sent`,
      'check the endpoint (txs --endpoint): a torchx-serverless API answers S3 https URLs',
    );
  }
  const transport = options.transport ?? nodeHttpTransport;
  const wait = options.sleep ?? sleep;
  const maxRetries = options.maxRetries ?? 3;
  for (let attempt = 0; ; attempt++) {
    let answer: HttpAnswer;
    try {
      answer = await transport({
        method: upload.method,
        url,
        headers: { ...upload.headers },
        body: open,
        timeoutMs: options.idleTimeoutMs ?? 60_000,
      });
    } catch (error) {
      if (attempt < maxRetries) {
        await wait(backoffDelay(attempt, RETRY_BACKOFF));
        continue;
      }
      throw new EndpointUnreachableError(
        `${url.protocol}//${url.host}`,
        `the upload of the workspace archive failed: ${(error as Error).message}`,
        'check the network and run again (an unchanged workspace is packed from the cache)',
      );
    }
    if (answer.status >= 200 && answer.status < 300) return;
    if (answer.status >= 500 && attempt < maxRetries) {
      await wait(backoffDelay(attempt, RETRY_BACKOFF));
      continue;
    }
    throw refusal(answer, url);
  }
}

/** The error for S3's refusal of an upload. */
function refusal(answer: HttpAnswer, url: URL): ApiError {
  const code = xmlField(answer.text, 'Code') ?? `Http${answer.status}`;
  const said = xmlField(answer.text, 'Message') ?? `HTTP ${answer.status}`;
  const requestId = xmlField(answer.text, 'RequestId') ?? answer.header('x-amz-request-id');
  const base = {
    status: answer.status,
    apiCode: code,
    ...(requestId === undefined ? {} : { requestId }),
    retryable: answer.status >= 500,
  };
  if (MISMATCH_CODES.has(code)) {
    return new ApiError({
      ...base,
      message: `S3 refused the workspace archive: it is not the archive the upload URL was signed for (${code}: ${said}); nothing was stored`,
      hint: 'the archive changed or was damaged after it was packed: remove ~/.cache/txs/workspaces (or $XDG_CACHE_HOME/txs/workspaces) and run again',
      exitCode: ExitCode.USAGE,
    });
  }
  if (code === 'AccessDenied' && /expired/i.test(said)) {
    return new ApiError({
      ...base,
      message: `S3 refused the workspace archive: the upload URL expired (${said}); nothing was stored`,
      hint: 'run again: a new run asks for a new URL',
      exitCode: ExitCode.USAGE,
    });
  }
  return new ApiError({
    ...base,
    message: `S3 refused the workspace archive at ${url.host} (${code}: ${said}); nothing was stored`,
    hint:
      answer.status >= 500
        ? 'S3 failed; run again later'
        : 'tell the operator of the deployment: its workspace bucket refused an upload URL it signed',
    exitCode: answer.status >= 500 ? ExitCode.UNAVAILABLE : ExitCode.CONFIG,
  });
}

/** The text of the first `<name>` element of S3's XML error, or undefined. */
function xmlField(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
}
