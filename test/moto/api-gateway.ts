/**
 * A loopback stand-in for the deployed stack's API Gateway (REST API, IAM authorization): every route of
 * `functions/routes.ts` served by its deployed handler through the local server's Lambda bridge, with no
 * local mode around it (no local scheduler, no local workspace archives: the handlers see what a deployed
 * stack's functions see, configured from the environment). As API Gateway does, it answers a request
 * without a SigV4 `Authorization` header with `403 Missing Authentication Token` before any handler runs,
 * and hands the handler the IAM principal of the signing credentials as `requestContext.identity.userArn`
 * (here looked up by the credentials' access key id; whatever `X-Txs-User` the caller sends is ignored).
 * The signature itself is not verified: what it covers is tested at the signer (test/unit/cli).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { lambdaBridge } from '../../lib/local/lambda-bridge.js';

/** A running stand-in: its URL (a `txs` endpoint), and the API requests it admitted. */
export interface ApiGateway {
  readonly url: string;
  /** Every admitted request, as `METHOD /path` and the principal it ran as, in order. */
  readonly admitted: { request: string; principal: string }[];
  close(): Promise<void>;
}

const CREDENTIAL = /^AWS4-HMAC-SHA256 Credential=([A-Z0-9]+)\/\d{8}\/[a-z0-9-]+\/execute-api\/aws4_request,/;

/** The access key id of a request's SigV4 `Authorization` header for `execute-api`, if it has one. */
function accessKeyOf(req: IncomingMessage): string | undefined {
  return CREDENTIAL.exec(req.headers.authorization ?? '')?.[1];
}

/**
 * Starts the stand-in on a free loopback port.
 *
 * @param principals the IAM principal (a user or assumed-role ARN) of each access key id it admits.
 */
export async function startApiGateway(principals: Readonly<Record<string, string>>): Promise<ApiGateway> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  // A handler's answer is the test's to check; the bridge's log line is not needed.
  const bridge = lambdaBridge(root, 'nobody', () => {});
  const admitted: ApiGateway['admitted'] = [];
  const server: Server = createServer((req, res) => {
    const accessKey = accessKeyOf(req);
    const principal = accessKey === undefined ? undefined : principals[accessKey];
    if (principal === undefined) {
      res.writeHead(403, {
        'content-type': 'application/json',
        'x-amzn-errortype': 'MissingAuthenticationTokenException',
      });
      res.end(JSON.stringify({ message: 'Missing Authentication Token' }));
      return;
    }
    const path = new URL(req.url ?? '/', 'http://api').pathname;
    admitted.push({ request: `${req.method} ${path}`, principal });
    // The bridge takes the caller from X-Txs-User (local mode's header): set here, never the caller's.
    req.headers['x-txs-user'] = principal;
    bridge(req, res, path).catch((error: unknown) => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `Internal server error: ${String(error)}` }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    admitted,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
