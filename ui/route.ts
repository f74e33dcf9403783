/** Hash routes: `#/?state=…` (apps), `#/app/<scheduler>/<appId>`, `#/logs/<scheduler>/<appId>?role=…`, `#/new`. */

/** A parsed route. */
export interface Route {
  view: 'list' | 'app' | 'logs' | 'new';
  scheduler?: string;
  appId?: string;
  query: URLSearchParams;
}

/** Parses `location.hash`. */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/';
  const mark = raw.indexOf('?');
  const path = mark < 0 ? raw : raw.slice(0, mark);
  const query = new URLSearchParams(mark < 0 ? '' : raw.slice(mark + 1));
  const parts = path.split('/').filter((p) => p !== '');
  const decode = (p: string | undefined) => (p === undefined ? undefined : decodeURIComponent(p));
  if ((parts[0] === 'app' || parts[0] === 'logs') && parts.length === 3) {
    return { view: parts[0], scheduler: decode(parts[1]), appId: decode(parts[2]), query };
  }
  if (parts[0] === 'new') return { view: 'new', query };
  return { view: 'list', query };
}

/**
 * A path segment for any text: lone surrogates (which `encodeURIComponent` refuses with a URIError) become
 * U+FFFD first, so no answer of a server can stop a page from rendering its links.
 */
export function encodeSegment(text: string): string {
  return encodeURIComponent(String(text).toWellFormed());
}

/** The hash of an app's page (or its logs). */
export function appHref(
  scheduler: string,
  appId: string,
  view: 'app' | 'logs' = 'app',
  query?: URLSearchParams,
): string {
  const q = query && [...query].length > 0 ? `?${query}` : '';
  return `#/${view}/${encodeSegment(scheduler)}/${encodeSegment(appId)}${q}`;
}

/** States after which nothing changes. */
export const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/** A fresh key for `Idempotency-Key`. */
export function newKey(): string {
  return crypto.randomUUID();
}
