/**
 * App handles: `{scheduler}://{session}/{appId}`, e.g. `aws_batch://torchx/gpu-queue:train-k3x9`.
 *
 * @module
 */
import { MalformedAppHandleError } from './errors.js';

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

const HANDLE_PATTERN = /^(.+):\/\/(.*)\/(.+)/;

/**
 * Parses a handle with TorchX's rule (greedy: the scheduler ends at the last `://`, the session at the last
 * `/`; the session may be empty).
 *
 * @throws MalformedAppHandleError when the handle does not match.
 * @example
 * ```ts
 * parseAppHandle('aws_batch://torchx/q:n'); // { scheduler: 'aws_batch', session: 'torchx', appId: 'q:n' }
 * ```
 */
export function parseAppHandle(handle: AppHandle): ParsedAppHandle {
  const match = HANDLE_PATTERN.exec(handle);
  if (!match) throw new MalformedAppHandleError(handle);
  const [, scheduler = '', session = '', appId = ''] = match;
  return { scheduler, session, appId };
}
