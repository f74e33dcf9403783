/**
 * App handles: `{scheduler}://{session}/{appId}`, e.g. `aws_batch://torchx/gpu-queue:train-k3x9`.
 *
 * @module
 */
import { MalformedAppHandleError } from './errors.js';
import { hasUnsafeNameCharacters } from './names.js';

/** A handle string, `{scheduler}://{session}/{appId}`. */
export type AppHandle = string;

/** The three parts of a handle. */
export interface ParsedAppHandle {
  scheduler: string;
  session: string;
  appId: string;
}

/** The session name TorchX uses when none is given. */
export const DEFAULT_SESSION = 'torchx';

/**
 * Builds a handle.
 *
 * @example
 * ```ts
 * makeAppHandle('aws_batch', 'torchx', 'q:train-k3x9'); // 'aws_batch://torchx/q:train-k3x9'
 * ```
 */
export function makeAppHandle(scheduler: string, session: string, appId: string): AppHandle {
  return `${scheduler}://${session}/${appId}`;
}

/** Scheduler names: 1–64 letters, digits, `_` or `-` (e.g. `aws_batch`). */
export const SCHEDULER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Session names: up to 64 letters, digits, `_`, `.` or `-` (empty is allowed, as in TorchX). */
export const SESSION_NAME_PATTERN = /^[A-Za-z0-9_.-]{0,64}$/;

/** What {@link SESSION_NAME_PATTERN} asks for, as a fix. */
export const SESSION_NAME_RULE = 'use up to 64 letters, digits, "_", "." or "-"';

/** Longest app id any scheduler issues (aws_batch: a 128-character queue name, `:`, a 128-character job name). */
export const MAX_APP_ID_LENGTH = 257;

const HANDLE_PATTERN = /^([^/]*):\/\/([^/]*)\/(.*)$/s;

/**
 * Parses a handle. Handles are canonical, so one app has one spelling: the scheduler matches
 * {@link SCHEDULER_NAME_PATTERN}, the session {@link SESSION_NAME_PATTERN} (so it holds no `/`), and the app id
 * is 1–{@link MAX_APP_ID_LENGTH} characters with no `/`, `%`, whitespace, control or format characters.
 * (TorchX's greedy parse would read `local_cwd://torchx/x/echo-1` as app `echo-1` of session `torchx/x`; here
 * it is malformed.) Each scheduler's own app id shape is checked where an id enters the API (the route).
 *
 * @throws MalformedAppHandleError saying which part is wrong.
 * @example
 * ```ts
 * parseAppHandle('aws_batch://torchx/q:n'); // { scheduler: 'aws_batch', session: 'torchx', appId: 'q:n' }
 * ```
 */
export function parseAppHandle(handle: AppHandle): ParsedAppHandle {
  const match = HANDLE_PATTERN.exec(handle);
  if (!match) throw new MalformedAppHandleError(handle);
  const [, scheduler = '', session = '', appId = ''] = match;
  if (!SCHEDULER_NAME_PATTERN.test(scheduler)) {
    throw new MalformedAppHandleError(handle, 'the scheduler must be 1-64 letters, digits, "_" or "-"');
  }
  if (!SESSION_NAME_PATTERN.test(session)) {
    throw new MalformedAppHandleError(handle, `the session must be a session name: ${SESSION_NAME_RULE}`);
  }
  const problem = appIdProblem(appId);
  if (problem !== undefined) throw new MalformedAppHandleError(handle, `the app id ${problem}`);
  return { scheduler, session, appId };
}

/**
 * What is wrong with `appId` as the app id part of any handle (undefined when nothing is): empty, longer than
 * {@link MAX_APP_ID_LENGTH}, or holding `/`, `%`, whitespace, control or format characters.
 */
export function appIdProblem(appId: string): string | undefined {
  if (appId.length === 0) return 'must not be empty';
  if (appId.length > MAX_APP_ID_LENGTH) {
    return `is ${appId.length} characters long; app ids have at most ${MAX_APP_ID_LENGTH}`;
  }
  if (/[/%\s]/.test(appId) || hasUnsafeNameCharacters(appId) || !appId.isWellFormed()) {
    return 'must not contain "/", "%", whitespace, control or invisible format characters';
  }
  return undefined;
}
