/**
 * The browser sessions of one server process (the local server, or `txs ui`): what a session cookie's value
 * is, how long it lives, when it is replaced, and how it ends. Kept in memory only, so a restart ends every
 * session.
 *
 * A value is `<instance>.<id>.<secret>`: `instance` is random per process (a value minted by another process,
 * even one that listened on the same port before, is refused without a lookup), `id` names the session and
 * `secret` is compared in constant time. A session ends at the first of:
 * - its absolute lifetime from the one-time link ({@link SessionLifetimes.maxAgeMs}, 12 h), never extended;
 * - an idle time without any request ({@link SessionLifetimes.idleMs}, 1 h);
 * - logout ({@link BrowserSessions.end});
 * - being the least recently used when a new session would exceed {@link SessionLifetimes.maxSessions}.
 *
 * Its secret is replaced on the first request after {@link SessionLifetimes.rotateAfterMs} (15 min); the
 * replaced value keeps working for {@link SessionLifetimes.graceMs} (1 min) so requests already under way
 * with it still pass, then it is refused. A request with the replaced value is never handed the new one.
 *
 * @module
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** How long sessions live (milliseconds) and how many are kept. */
export interface SessionLifetimes {
  /** From the link's exchange to the session's end, whatever happens. */
  maxAgeMs: number;
  /** Without a request, after which the session ends. */
  idleMs: number;
  /** Age of a cookie value after which the next request gets a new one. */
  rotateAfterMs: number;
  /** How long a replaced value still works. */
  graceMs: number;
  /** Sessions kept at most (browsers, tabs share one). */
  maxSessions: number;
}

/** The lifetimes every server uses (see the module comment). */
export const SESSION_LIFETIMES: Readonly<SessionLifetimes> = {
  maxAgeMs: 12 * 60 * 60_000,
  idleMs: 60 * 60_000,
  rotateAfterMs: 15 * 60_000,
  graceMs: 60_000,
  maxSessions: 32,
};

/** A cookie value to send and how many seconds the browser should keep it (`Max-Age`). */
export interface IssuedValue {
  value: string;
  maxAgeSeconds: number;
}

/** What {@link BrowserSessions.check} found: admitted (maybe with a new value to send), or why not. */
export type SessionCheck = { admitted: true; renewed?: IssuedValue } | { admitted: false; reason: string };

interface Session {
  secret: string;
  /** The value replaced last, while it still works. */
  previous?: { secret: string; until: number };
  createdAt: number;
  lastSeenAt: number;
  /** When the current secret was issued. */
  issuedAt: number;
}

/** `bytes` random bytes, base64url: a secret for a cookie, a link or a session. */
export const random = (bytes: number) => randomBytes(bytes).toString('base64url');

/** Compares two secrets in constant time (for equal lengths). */
export function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** One process's browser sessions (see the module comment). */
export class BrowserSessions {
  /** This process's random part of every value it mints. */
  readonly instance = random(9);
  private readonly sessions = new Map<string, Session>();
  private readonly lifetimes: SessionLifetimes;

  constructor(lifetimes: Partial<SessionLifetimes> = {}) {
    this.lifetimes = { ...SESSION_LIFETIMES, ...lifetimes };
  }

  /** Sessions currently kept (at most {@link SessionLifetimes.maxSessions}). */
  get size(): number {
    return this.sessions.size;
  }

  /** Opens a session: the cookie value to set. */
  open(): IssuedValue {
    const now = Date.now();
    this.prune(now);
    while (this.sessions.size >= this.lifetimes.maxSessions) {
      let oldest: [string, Session] | undefined;
      for (const entry of this.sessions) {
        if (!oldest || entry[1].lastSeenAt < oldest[1].lastSeenAt) oldest = entry;
      }
      if (!oldest) break;
      this.sessions.delete(oldest[0]);
    }
    const id = random(12);
    const session: Session = { secret: random(32), createdAt: now, lastSeenAt: now, issuedAt: now };
    this.sessions.set(id, session);
    return this.issue(id, session, now);
  }

  /**
   * Checks a presented cookie value: admitted when it names a live session of this process with its current
   * secret (or the one just replaced, within the grace). Counts as the session's activity, and replaces the
   * secret when it is due (`renewed`).
   */
  check(value: string): SessionCheck {
    const now = Date.now();
    const found = this.find(value, now);
    if (!found.session) return { admitted: false, reason: found.reason };
    const { id, session, current } = found;
    session.lastSeenAt = now;
    if (!current || now - session.issuedAt < this.lifetimes.rotateAfterMs) return { admitted: true };
    session.previous = { secret: session.secret, until: now + this.lifetimes.graceMs };
    session.secret = random(32);
    session.issuedAt = now;
    return { admitted: true, renewed: this.issue(id, session, now) };
  }

  /** Ends the session `value` names (logout); false when there was none live. */
  end(value: string): boolean {
    const found = this.find(value, Date.now());
    if (!found.session) return false;
    this.sessions.delete(found.id);
    return true;
  }

  private issue(id: string, session: Session, now: number): IssuedValue {
    const remaining = session.createdAt + this.lifetimes.maxAgeMs - now;
    return {
      value: `${this.instance}.${id}.${session.secret}`,
      maxAgeSeconds: Math.max(0, Math.floor(remaining / 1000)),
    };
  }

  private find(
    value: string,
    now: number,
  ): { id: string; session: Session; current: boolean } | { session?: undefined; reason: string } {
    const [instance, id, secret, ...rest] = value.split('.');
    if (instance === undefined || id === undefined || secret === undefined || rest.length > 0) {
      return { reason: 'the session cookie is not one this server makes' };
    }
    if (!equal(instance, this.instance)) {
      return {
        reason: 'the session cookie is from another server process (one that ran on this port before?)',
      };
    }
    const session = this.sessions.get(id);
    if (!session) return { reason: 'the session has ended (logged out, or pushed out by newer sessions)' };
    if (this.expired(session, now)) {
      this.sessions.delete(id);
      return { reason: 'the session has expired' };
    }
    if (equal(secret, session.secret)) return { id, session, current: true };
    if (session.previous && now < session.previous.until && equal(secret, session.previous.secret)) {
      return { id, session, current: false };
    }
    return { reason: 'the session cookie was replaced by a newer one' };
  }

  private expired(session: Session, now: number): boolean {
    return (
      now - session.createdAt >= this.lifetimes.maxAgeMs || now - session.lastSeenAt >= this.lifetimes.idleMs
    );
  }

  private prune(now: number): void {
    for (const [id, session] of this.sessions) if (this.expired(session, now)) this.sessions.delete(id);
  }
}
