/**
 * `txs log` identifiers: `SCHEDULER://[SESSION]/APP_ID[/ROLE[/REPLICA[,REPLICA…]]]`, split the way
 * TorchX's `torchx log` does.
 *
 * @module
 */
import { makeAppHandle } from '../specs/app-handle.js';
import { UsageError } from './errors.js';

/** The format, as shown in messages. */
export const LOG_IDENTIFIER_FORMAT = 'SCHEDULER://[SESSION]/APP_ID[/ROLE[/REPLICA[,REPLICA...]]]';

/** What to read logs of. */
export interface LogTarget {
  /** The app handle, `scheduler://session/appId`. */
  handle: string;
  scheduler: string;
  session: string;
  appId: string;
  /** A role name; every role when absent. */
  role?: string;
  /** Replica indexes of `role`; every replica of the role when absent. */
  replicas?: number[];
}

/**
 * Splits a log identifier. After `://`, the path is split on `/`: session (may be empty), app id, then an
 * optional role and an optional comma-separated list of replica indexes — so, unlike a plain handle, the
 * session cannot contain `/` (TorchX's rule). Unlike TorchX, dots are allowed in every part.
 *
 * @throws UsageError when the identifier does not have that form.
 * @example
 * ```ts
 * parseLogTarget('local_cwd://torchx/echo-k3x9/echo/0');
 * // { handle: 'local_cwd://torchx/echo-k3x9', scheduler: 'local_cwd', session: 'torchx', appId: 'echo-k3x9', role: 'echo', replicas: [0] }
 * ```
 */
export function parseLogTarget(identifier: string): LogTarget {
  const fail = (why: string): never => {
    throw new UsageError(
      `${identifier} is not of the form ${LOG_IDENTIFIER_FORMAT}: ${why}`,
      'e.g. local_cwd://torchx/echo-k3x9, aws_batch://torchx/queue:train-k3x9/trainer/0,1',
    );
  };
  const separator = identifier.indexOf('://');
  if (separator <= 0) return fail('it has no SCHEDULER:// prefix');
  const scheduler = identifier.slice(0, separator);
  if (!/^[\w-]+$/.test(scheduler)) return fail(`scheduler \`${scheduler}\` is not a name`);
  const path = identifier.slice(separator + 3).replace(/\/$/, '');
  const parts = path.split('/');
  if (parts.length < 2) return fail('it has no APP_ID');
  if (parts.length > 4) return fail('it has more than SESSION/APP_ID/ROLE/REPLICAS after ://');
  const [session = '', appId = '', role, replicaList] = parts;
  if (appId === '') return fail('APP_ID is empty');
  const target: LogTarget = { handle: makeAppHandle(scheduler, session, appId), scheduler, session, appId };
  if (role !== undefined) {
    if (role === '') return fail('ROLE is empty');
    target.role = role;
  }
  if (replicaList !== undefined) {
    if (!/^\d+(,\d+)*,?$/.test(replicaList))
      return fail(`\`${replicaList}\` is not a list of replica indexes`);
    target.replicas = [
      ...new Set(
        replicaList
          .split(',')
          .filter((r) => r !== '')
          .map(Number),
      ),
    ];
  }
  return target;
}
