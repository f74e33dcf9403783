/**
 * Errors of the `txs` CLI and the exit codes they map to. Every error carries a one-line message (what is
 * wrong) and, when there is one, a hint (how to fix it); `main` prints them as `error: …` and `hint: …`.
 *
 * @module
 */
import { type ErrorCode, type FieldIssue, TxsError } from '../specs/errors.js';

/**
 * The exit codes of `txs`. Scripts can tell "the job failed" (1) from "the command was wrong" (2), "no
 * such app" (3), "not allowed" (4), "could not get an answer" (5, worth retrying) and "the server must be
 * configured first" (78, not worth retrying).
 */
export const ExitCode = {
  /** The command did what it was asked; with `--wait`, the app SUCCEEDED. */
  OK: 0,
  /** With `--wait` (or `txs wait`): the app ended FAILED, CANCELLED or UNKNOWN. */
  APP_FAILED: 1,
  /** Bad arguments, a bad `-cfg`, a bad `.txsconfig`, or a request the API rejected as invalid (4xx). */
  USAGE: 2,
  /** The app does not exist (or belongs to someone else). */
  NOT_FOUND: 3,
  /** The endpoint refused the caller's identity (401/403): credentials, region or IAM policy. */
  AUTH: 4,
  /** The endpoint could not be reached, is not a torchx-serverless API, or failed (5xx). Retry later. */
  UNAVAILABLE: 5,
  /**
   * The server cannot do this until its operator configures it (sysexits' EX_CONFIG): it answered a 5xx that
   * it marks not retryable, e.g. `BackendNotConfigured` (no AWS region or credentials for the scheduler) or
   * `BackendAccessDenied` (the deployment's IAM permissions). Retrying does not help.
   */
  CONFIG: 78,
  /** Interrupted with Ctrl-C (128 + SIGINT). */
  INTERRUPTED: 130,
} as const;
/** One of the exit codes. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Base class of the CLI's errors: a message, an optional hint and the exit code to leave with. */
export class CliError extends TxsError {
  readonly code: ErrorCode = 'CliError';
  /** How to fix it, one line (printed as `hint: …`). */
  readonly hint: string | undefined;
  readonly exitCode: ExitCode;

  constructor(
    message: string,
    options: { exitCode: ExitCode; hint?: string; cause?: unknown; issues?: readonly FieldIssue[] },
  ) {
    super(message, { cause: options.cause, issues: options.issues ?? [] });
    this.exitCode = options.exitCode;
    this.hint = options.hint;
  }
}

/** Thrown for wrong command-line arguments, a bad `-cfg` or `--app` file, or a malformed handle. Exit 2. */
export class UsageError extends CliError {
  override readonly code: ErrorCode = 'UsageError';
  constructor(message: string, hint?: string, options: { cause?: unknown } = {}) {
    super(message, {
      exitCode: ExitCode.USAGE,
      ...(hint === undefined ? {} : { hint }),
      cause: options.cause,
    });
  }
}

/** Thrown when a `.txsconfig` file cannot be read or parsed; the message names the file and line. Exit 2. */
export class ConfigFileError extends UsageError {
  override readonly code = 'ConfigFileError';
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    reason: string,
  ) {
    super(
      `${file}${line === undefined ? '' : `:${line}`}: ${reason}`,
      'the file is INI like .torchxconfig: [section] headers and `key = value` lines (see docs: .txsconfig)',
    );
  }
}

/** Thrown when the endpoint cannot be reached at all (connection refused, DNS, TLS, timeout). Exit 5. */
export class EndpointUnreachableError extends CliError {
  override readonly code = 'EndpointUnreachable';
  constructor(
    readonly endpoint: string,
    reason: string,
    hint: string,
    options: { cause?: unknown } = {},
  ) {
    super(`cannot reach ${endpoint}: ${reason}`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint,
      cause: options.cause,
    });
  }
}

/** What the API said about a failed request. */
export interface ApiErrorInit {
  status: number;
  /** The API's error code (`UnknownApp`, `ValidationFailed`, …), or `Http<status>` when the body had none. */
  apiCode: string;
  message: string;
  details?: readonly FieldIssue[];
  requestId?: string;
  hint?: string;
  exitCode: ExitCode;
  /**
   * Whether the same request may succeed if sent again: the API's `error.retryable`, or for an answer
   * without it (API Gateway's own 429/502/503/504, a proxy) the status alone.
   */
  retryable?: boolean;
}

/**
 * Thrown when the API answers with an error status. `apiCode` is the API's `error.code`; the exit code
 * follows the status (400 → 2, 404 → 3, 401/403 → 4, 5xx → 5, or 78 for a 502/503 the API marks not
 * retryable).
 */
export class ApiError extends CliError {
  override readonly code: ErrorCode = 'ApiError';
  readonly status: number;
  readonly apiCode: string;
  readonly requestId: string | undefined;
  /** Whether sending the same request again may succeed (see {@link ApiErrorInit.retryable}). */
  readonly retryable: boolean;

  constructor(init: ApiErrorInit) {
    super(init.message, {
      exitCode: init.exitCode,
      ...(init.hint === undefined ? {} : { hint: init.hint }),
      issues: init.details ?? [],
    });
    this.status = init.status;
    this.apiCode = init.apiCode;
    this.requestId = init.requestId;
    this.retryable = init.retryable ?? false;
  }
}

/** Thrown when the endpoint rejects the caller's identity or signature (HTTP 401/403). Exit 4. */
export class AuthError extends ApiError {
  override readonly code = 'AuthError';
}

/** Thrown when the app named by a handle does not exist for this caller (HTTP 404 `UnknownApp`). Exit 3. */
export class AppNotFoundError extends ApiError {
  override readonly code = 'AppNotFound';
}

/** Thrown when the user stops a command with Ctrl-C. Exit 130. */
export class InterruptedError extends CliError {
  override readonly code = 'Interrupted';
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.INTERRUPTED, ...(hint === undefined ? {} : { hint }) });
  }
}
