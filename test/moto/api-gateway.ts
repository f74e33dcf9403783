/**
 * A loopback stand-in for the deployed stack's API Gateway (REST API, stage `prod`, IAM authorization):
 * every route of `functions/routes.ts` served by its deployed handler through the local server's Lambda
 * bridge, with no local mode around it (no local scheduler, no local workspace archives: the handlers see what
 * a deployed stack's functions see, configured from the environment).
 *
 * As API Gateway does, it checks each request's SigV4 signature for `execute-api` before any handler runs —
 * recomputed by botocore from the request as received (execute-api-check.py: another language's SigV4, so
 * the CLI's signer is not checked against itself) — answers `403` without one, with an unknown access key or
 * with a signature that does not match, and hands the handler the IAM principal of the signing credentials as
 * `requestContext.identity.userArn` (whatever `X-Txs-User` the caller sends is ignored).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { lambdaBridge } from '../../lib/local/lambda-bridge.js';
import { MOTO_REGION } from './constants.js';

/** The stage in the stand-in's URL, as in a deployed stack's `https://…execute-api…/prod`. */
export const API_STAGE = 'prod';

/** An IAM identity the stand-in knows: the secret of its access key, and the principal it authenticates as. */
export interface IamIdentity {
  readonly secretKey: string;
  /** A user or assumed-role ARN. */
  readonly principal: string;
}

/** A running stand-in: its URL (a `txs` endpoint, with the stage), and the requests it admitted. */
export interface ApiGateway {
  readonly url: string;
  /** Every admitted request, as `METHOD /path` (without the stage) and the principal it ran as, in order. */
  readonly admitted: { request: string; principal: string }[];
  /** Every refused request's answer message, in order. */
  readonly refused: string[];
  close(): Promise<void>;
}

const CHECK = fileURLToPath(new URL('./execute-api-check.py', import.meta.url));
const ACCESS_KEY = /^AWS4-HMAC-SHA256 Credential=([^/]+)\//;
/** The checker's verdict on a request whose signature botocore computes otherwise. */
const SIGNATURE_MISMATCH =
  'invalid: the request signature we calculated does not match the signature you provided';

/** One botocore process checking signatures, one request at a time (a JSON line in, a verdict line out). */
function signatureChecker(): { check(request: object): Promise<string>; close(): void } {
  const child: ChildProcess = spawn(process.env.TXS_MOTO_PYTHON ?? 'python3', [CHECK], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const verdicts = createInterface({ input: child.stdout as Readable })[Symbol.asyncIterator]();
  let queue: Promise<unknown> = Promise.resolve();
  return {
    check(request) {
      const verdict = queue.then(async () => {
        child.stdin?.write(`${JSON.stringify(request)}\n`);
        const { value, done } = await verdicts.next();
        return done ? 'invalid: the checker exited' : (value as string);
      });
      queue = verdict.catch(() => undefined);
      return verdict;
    },
    close: () => {
      child.stdin?.end();
      child.kill();
    },
  };
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function refuse(res: ServerResponse, refused: string[], type: string, message: string): void {
  refused.push(message);
  res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  res.end(JSON.stringify({ message }));
}

/**
 * Starts the stand-in on a free loopback port.
 *
 * @param identities the IAM identity of each access key id it admits.
 */
export async function startApiGateway(
  identities: Readonly<Record<string, IamIdentity>>,
): Promise<ApiGateway> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  // A handler's answer is the test's to check; the bridge's log line is not needed.
  const bridge = lambdaBridge(root, 'nobody', () => {});
  const checker = signatureChecker();
  const admitted: ApiGateway['admitted'] = [];
  const refused: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await bodyOf(req);
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const stage = `/${API_STAGE}`;
    if (!url.pathname.startsWith(`${stage}/`)) {
      return refuse(res, refused, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    }
    const authorization = req.headers.authorization;
    if (authorization === undefined) {
      return refuse(res, refused, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    }
    const identity = identities[ACCESS_KEY.exec(authorization)?.[1] ?? ''];
    if (identity === undefined) {
      return refuse(
        res,
        refused,
        'UnrecognizedClientException',
        'The security token included in the request is invalid.',
      );
    }
    const verdict = await checker.check({
      method: req.method,
      url: url.href,
      headers: req.headers,
      body: body.toString('base64'),
      secretKey: identity.secretKey,
      region: MOTO_REGION,
    });
    if (verdict !== 'valid') {
      // API Gateway's words; botocore's reason goes to the test's error output.
      if (verdict !== SIGNATURE_MISMATCH) console.error(`api-gateway stand-in: ${verdict}`);
      return refuse(
        res,
        refused,
        'InvalidSignatureException',
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
      );
    }
    const path = url.pathname.slice(stage.length);
    admitted.push({ request: `${req.method} ${path}`, principal: identity.principal });
    // The bridge reads the caller from X-Txs-User (local mode's header): set here, never the caller's; and
    // the body again, from a stream of what was read.
    const forwarded = Object.assign(Readable.from(body.length > 0 ? [body] : []), {
      method: req.method,
      url: req.url,
      headers: { ...req.headers, 'x-txs-user': identity.principal },
      rawHeaders: req.rawHeaders,
      socket: req.socket,
    }) as unknown as IncomingMessage;
    await bridge(forwarded, res, path);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `Internal server error: ${String(error)}` }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/${API_STAGE}`,
    admitted,
    refused,
    close: async () => {
      checker.close();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
