/**
 * What every request to the local server goes through before an API handler sees it: a browser's one-time
 * link is exchanged for its session cookie; then {@link LocalAccess} admits or refuses the caller (Host and
 * Origin, the own socket, the peer's OS user, the token or the session cookie); the path is refused when it
 * has `.`/`..` segments; the dashboard's own paths (a new link, logout, the page and its files) are answered
 * here, then the server's own streamed routes (`ownRoutes`: workspace uploads); everything else goes over
 * the {@link LambdaBridge} to the route's function. A thrown error becomes a 500 `InternalError` (and a
 * console line), never a dropped connection.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpRequestError } from '../../functions/shared/http-errors.js';
import { NEW_LINK_PATH } from '../loopback/local-token.js';
import { LOGOUT_PATH, type OneTimeLink, withoutToken } from '../loopback/one-time-link.js';
import { serveUi } from '../loopback/ui-assets.js';
import { checkHostAndOrigin, type LocalAccess } from './access.js';
import { type LambdaBridge, sendError, sendJson } from './lambda-bridge.js';

/** The path of a request target as sent (no dot-segment resolution, no decoding), without query or fragment. */
function rawPathOf(target: string): string {
  const end = target.search(/[?#]/);
  return end < 0 ? target : target.slice(0, end);
}

/** True when a segment of `path` is `.` or `..`, literally or percent-encoded (`%2e`). */
function hasDotSegment(path: string): boolean {
  return path.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment));
}

/** Who may come in, known once the server listens (its port is part of every check). */
export interface Gate {
  access: LocalAccess;
  link: OneTimeLink;
  /** The server's own origin (`http://127.0.0.1:8080`), the base of new one-time links. */
  origin: string;
}

/** Handles one request; `viaOwnSocket`: it came through the server's own Unix socket (only its OS user's). */
export type RequestHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  viaOwnSocket: boolean,
) => Promise<void>;

/**
 * The local server's request handler.
 *
 * @param gate the admission rules; called per request, so they may be set after the handler is made (but
 *   before the server accepts a connection).
 */
export function admittingHandler(
  gate: () => Gate,
  bridge: LambdaBridge,
  log: (line: string) => void,
  ownRoutes?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>,
): RequestHandler {
  return async (req, res, viaOwnSocket) => {
    try {
      const { access, link, origin } = gate();
      // A browser's one-time link: exchanged for the session cookie (once), past the Host and Origin checks.
      if (
        !viaOwnSocket &&
        checkHostAndOrigin(req, access.port) === undefined &&
        (await link.exchange(req, res))
      ) {
        log(`${req.method} ${withoutToken(req.url ?? '/')} -> ${res.statusCode} (one-time link)`);
        req.resume();
        return;
      }
      const refusal = await access.check(req, res, viaOwnSocket);
      if (refusal) {
        log(`${req.method} ${withoutToken(req.url ?? '/')} -> ${refusal.statusCode} (${refusal.code})`);
        req.resume();
        sendError(res, new HttpRequestError(refusal.code, refusal.message));
        return;
      }
      // Route on the path as sent, like API Gateway: `..` and `.` segments are refused rather than resolved,
      // and `%2F` stays inside its path parameter (the handler decodes it once and checks the id).
      const path = rawPathOf(req.url ?? '/');
      if (hasDotSegment(path)) {
        sendError(
          res,
          new HttpRequestError(
            'ValidationFailed',
            'path: "." and ".." segments are not resolved; send the path without them',
            [{ path: 'path', message: '"." and ".." segments are not resolved; remove them' }],
          ),
        );
        return;
      }
      if (path === NEW_LINK_PATH && req.method === 'POST') {
        req.resume();
        sendJson(res, 201, { url: link.newLink(origin) }, { 'cache-control': 'no-store' });
        return;
      }
      if (path === LOGOUT_PATH && req.method === 'POST') {
        req.resume();
        link.logout(req, res);
        return;
      }
      // The dashboard (`/`, `/ui/*`), admitted by the same rule as the API.
      if (await serveUi(req.method ?? 'GET', path, res)) {
        req.resume();
        return;
      }
      // Routes whose bodies are streamed to disk rather than through a handler (workspace archives).
      if (ownRoutes !== undefined && (await ownRoutes(req, res, path))) {
        log(`${req.method} ${path} -> ${res.statusCode}`);
        return;
      }
      await bridge(req, res, path);
    } catch (error) {
      console.error('local server error:', error);
      if (!res.headersSent) sendError(res, error);
      else res.end();
    }
  };
}
