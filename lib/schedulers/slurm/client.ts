/**
 * A small slurmrestd (OpenAPI v0.0.38) client over `fetch`: submit, get one job, list jobs, cancel. It signs
 * HS256 JWTs from the cluster's key (`auth/jwt`) or sends a configured token, and turns slurmrestd's answers
 * into the schedulers layer's errors. slurmrestd answers HTTP 500 for a bad token, an unknown job and a bad
 * partition alike; the `errors[]` entries tell them apart.
 *
 * @module
 */
import { createHmac } from 'node:crypto';
import { ValidationError } from '../../specs/index.js';
import {
  BackendAccessDeniedError,
  BackendError,
  BackendNotConfiguredError,
  BackendValidationError,
} from '../errors.js';
import type { SlurmJob } from './describe.js';
import { SLURMRESTD_API, type SlurmJobSubmission, SUBMIT_PATH } from './translate.js';

/** The `fetch` the client uses; injected so tests fake the wire. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** How the client authenticates. */
export type SlurmAuth =
  /** A token issued by the cluster (`scontrol token`), sent as is. */
  | { token: string }
  /**
   * The cluster's JWT key (`AuthAltParameters=jwt_key=…`), or a loader of it (e.g. from a secret; called once):
   * the client signs short-lived tokens itself.
   */
  | { jwtKey: Buffer | (() => Promise<Buffer>); lifespanSeconds?: number };

/** Construction options of {@link SlurmRestClient}. */
export interface SlurmRestClientOptions {
  /** slurmrestd's base URL, e.g. `http://slurm-head:6820`. */
  url: string;
  /** The Slurm user jobs are submitted as (`X-SLURM-USER-NAME`). */
  user: string;
  auth: SlurmAuth;
  fetch?: FetchLike;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
}

/** One entry of slurmrestd's `errors[]` (`v0.0.38_error`; 22.05 sends `error_code` on some paths). */
export interface SlurmRestError {
  error?: string;
  error_number?: number;
  error_code?: number;
  description?: string;
  source?: string;
}

/** Slurm's `ESLURM_INVALID_JOB_ID`. */
export const ESLURM_INVALID_JOB_ID = 2017;
/** Slurm's `ESLURM_INVALID_PARTITION_NAME`. */
export const ESLURM_INVALID_PARTITION_NAME = 2000;
/** Slurm's `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE`. */
export const ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE = 2014;
/** Slurm's `SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT`: what a submit with a rejected token answers. */
export const SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT = 5005;

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/**
 * Signs an HS256 JWT the way `scontrol token` does: `{exp, iat, sun}` (`sun` = the Slurm user name).
 *
 * @example
 * ```ts
 * signSlurmJwt(key, 'alice', Date.now(), 600); // 'eyJhbGciOiJIUzI1NiIs…'
 * ```
 */
export function signSlurmJwt(key: Buffer, user: string, nowMs: number, lifespanSeconds = 600): string {
  const iat = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify({ exp: iat + lifespanSeconds, iat, sun: user }));
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

function errorNumber(error: SlurmRestError): number | undefined {
  return error.error_number ?? error.error_code;
}

function describeErrors(errors: readonly SlurmRestError[]): string {
  return (
    errors
      .map((e) => `${[e.error, e.description].filter(Boolean).join(': ')} (${errorNumber(e) ?? '?'})`)
      .join('; ') || 'no error detail'
  );
}

/** What a call is, for error messages. */
type Action = 'submit' | 'get' | 'list' | 'cancel';

/** The slurmrestd client. */
export class SlurmRestClient {
  private readonly fetch: FetchLike;
  private readonly now: () => number;
  private readonly url: string;

  constructor(private readonly options: SlurmRestClientOptions) {
    this.fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.now = options.now ?? Date.now;
    this.url = options.url.replace(/\/+$/, '');
  }

  /** The Slurm user the client submits as. */
  get user(): string {
    return this.options.user;
  }

  private key: Promise<Buffer> | undefined;

  private async token(): Promise<string> {
    const { auth } = this.options;
    if ('token' in auth) return auth.token;
    const load = auth.jwtKey;
    if (this.key === undefined) {
      this.key = Buffer.isBuffer(load) ? Promise.resolve(load) : load();
      // a failed load is tried again on the next call
      this.key.catch(() => {
        this.key = undefined;
      });
    }
    // a fresh short-lived token per call: nothing to expire mid-session
    return signSlurmJwt(await this.key, this.options.user, this.now(), auth.lifespanSeconds ?? 600);
  }

  private async call(
    action: Action,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const headers: Record<string, string> = {
      'X-SLURM-USER-NAME': this.options.user,
      'X-SLURM-USER-TOKEN': await this.token(),
      Accept: 'application/json',
    };
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response: Response;
    try {
      response = await this.fetch(`${this.url}${path}`, init);
    } catch (error) {
      throw new BackendError(
        `slurmrestd at ${this.url} could not be reached (${action}): ${String(error)}`,
        true,
        {
          cause: error,
        },
      );
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === 'object') json = parsed as Record<string, unknown>;
    } catch {
      // slurmrestd answers plain text for authentication failures ("Authentication failure")
    }
    if (response.status === 401 || response.status === 403) {
      throw new BackendAccessDeniedError(
        `slurmrestd refused the credentials of Slurm user '${this.options.user}' (HTTP ${response.status}: ` +
          `${text.trim().slice(0, 200)}); check the slurm token or JWT key configuration`,
      );
    }
    return { status: response.status, json };
  }

  private errorsOf(json: Record<string, unknown>): SlurmRestError[] {
    return Array.isArray(json.errors) ? (json.errors as SlurmRestError[]) : [];
  }

  private fail(action: Action, status: number, errors: readonly SlurmRestError[]): never {
    const detail = describeErrors(errors);
    const numbers = errors.map(errorNumber);
    if (numbers.includes(ESLURM_INVALID_PARTITION_NAME)) {
      // Our own words (ValidationFailed), so the field reaches the caller; Slurm's text stays in the logs.
      throw ValidationError.forField('cfg.partition', 'Slurm has no such partition; give one `sinfo` lists');
    }
    if (numbers.includes(ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE)) {
      throw ValidationError.forField(
        'app.roles',
        "no node of the partition can hold a replica; lower the role's resource (cpu, memMB, gpu) or choose another cfg.partition",
      );
    }
    // a rejected token: slurmctld drops the connection (5005 on submit) or reports an unspecified error (-1)
    if (numbers.includes(SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT) || numbers.includes(-1)) {
      throw new BackendAccessDeniedError(
        `slurmrestd could not ${action} as Slurm user '${this.options.user}' (${detail}): the token is most ` +
          'likely invalid or expired, or the user is unknown to the cluster; check the slurm token or JWT key',
      );
    }
    if (status >= 400 && status < 500) {
      throw new BackendValidationError(`slurmrestd rejected the ${action} request: ${detail}`, [
        { path: 'request', message: detail },
      ]);
    }
    throw new BackendError(`slurmrestd ${action} failed (HTTP ${status}): ${detail}`, status >= 500);
  }

  /**
   * Submits a job (`POST /slurm/v0.0.38/job/submit`) and returns its id.
   *
   * @throws BackendValidationError for a bad partition or an unsatisfiable request; BackendAccessDeniedError
   *   for rejected credentials; BackendError otherwise.
   */
  async submit(body: SlurmJobSubmission): Promise<number> {
    const { status, json } = await this.call('submit', 'POST', SUBMIT_PATH, body);
    const errors = this.errorsOf(json);
    if (status === 200 && errors.length === 0 && typeof json.job_id === 'number') return json.job_id;
    return this.fail('submit', status, errors);
  }

  /** Every record of a job (the components of a heterogeneous job); undefined when Slurm does not know it. */
  async job(jobId: number): Promise<SlurmJob[] | undefined> {
    const { status, json } = await this.call('get', 'GET', `/slurm/${SLURMRESTD_API}/job/${jobId}`);
    const errors = this.errorsOf(json);
    if (status === 200 && errors.length === 0) return (json.jobs as SlurmJob[] | undefined) ?? [];
    if (errors.some((e) => errorNumber(e) === ESLURM_INVALID_JOB_ID)) return undefined;
    return this.fail('get', status, errors);
  }

  /** Every job slurmctld still holds (pending, running, and finished within `MinJobAge`). */
  async jobs(): Promise<SlurmJob[]> {
    const { status, json } = await this.call('list', 'GET', `/slurm/${SLURMRESTD_API}/jobs`);
    const errors = this.errorsOf(json);
    if (status === 200 && errors.length === 0) return (json.jobs as SlurmJob[] | undefined) ?? [];
    return this.fail('list', status, errors);
  }

  /** Cancels a job (`DELETE /slurm/v0.0.38/job/{id}`); false when Slurm does not know it. */
  async cancel(jobId: number): Promise<boolean> {
    const { status, json } = await this.call('cancel', 'DELETE', `/slurm/${SLURMRESTD_API}/job/${jobId}`);
    const errors = this.errorsOf(json);
    if (status === 200 && errors.length === 0) return true;
    if (errors.some((e) => errorNumber(e) === ESLURM_INVALID_JOB_ID)) return false;
    return this.fail('cancel', status, errors);
  }
}

/** The error for a scheduler used without slurmrestd configuration. */
export function slurmNotConfigured(): BackendNotConfiguredError {
  return new BackendNotConfiguredError(
    'the slurm scheduler needs a slurmrestd URL, a user and a token or JWT key: set TXS_SLURM_URL, ' +
      'TXS_SLURM_USER and TXS_SLURM_JWT_KEY_FILE (or TXS_SLURM_TOKEN) and restart; dry runs work without them',
  );
}
