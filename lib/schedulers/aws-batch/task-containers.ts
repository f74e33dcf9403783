/**
 * The role's container of a described Batch job, node job or attempt, whichever form it has: `container`
 * (a job registered with a node range's `container`, as without a workspace), or the main container of an
 * `ecsProperties` task (a job in a workspace, see `workspace.ts`), whose fetch container's failure is
 * reported too. Pure.
 *
 * @module
 */

import { FETCH_CONTAINER_NAME } from '../workspace.js';
import { MAIN_CONTAINER_NAME } from './workspace.js';

/** The container part of a job or attempt that the state mapping reads. */
export interface BatchContainerLike {
  exitCode?: number;
  reason?: string;
  logStreamName?: string;
  networkInterfaces?: { privateIpv4Address?: string }[];
  logConfiguration?: { logDriver?: string; options?: Record<string, string> };
}

/** A container of an `ecsProperties` task, as DescribeJobs and events report it. */
export interface BatchTaskContainerLike extends BatchContainerLike {
  name?: string;
  essential?: boolean;
}

/** An `ecsProperties` task of a job or attempt. */
export interface BatchTaskLike {
  containers?: BatchTaskContainerLike[];
}

/** A job, node job or attempt: its container, or its task (a job's `ecsProperties`, an attempt's `taskProperties`). */
export interface BatchContainersLike {
  container?: BatchContainerLike;
  ecsProperties?: { taskProperties?: BatchTaskLike[] };
  taskProperties?: BatchTaskLike[];
}

/** The containers of a job's or attempt's task; empty for a single-container form. */
function taskContainersOf(part: Readonly<BatchContainersLike>): BatchTaskContainerLike[] {
  return (part.taskProperties ?? part.ecsProperties?.taskProperties)?.[0]?.containers ?? [];
}

/**
 * The container of a task's `containers` that runs the role: the one named `main`, else the first one marked
 * essential, else the last.
 */
export function mainContainerOf<T extends { name?: string; essential?: boolean }>(
  containers: readonly T[],
): T | undefined {
  return (
    containers.find((c) => c.name === MAIN_CONTAINER_NAME) ??
    containers.find((c) => c.essential === true) ??
    containers[containers.length - 1]
  );
}

/** The container that runs the role: `container`, else the task's main container ({@link mainContainerOf}). */
export function roleContainerOf(part: Readonly<BatchContainersLike>): BatchContainerLike | undefined {
  return part.container ?? mainContainerOf(taskContainersOf(part));
}

/** The task's fetch container, if it has one. */
function fetchContainerOf(part: Readonly<BatchContainersLike>): BatchTaskContainerLike | undefined {
  return taskContainersOf(part).find((c) => c.name === FETCH_CONTAINER_NAME);
}

/**
 * The log stream a replica's logs are read from: its role container's; for a task whose workspace fetch
 * failed before the role's container wrote anything, the fetch container's, so the logs show why (e.g. S3's
 * `AccessDenied`).
 */
export function replicaLogStreamOf(part: Readonly<BatchContainersLike>): string | undefined {
  const own = roleContainerOf(part)?.logStreamName;
  if (own) return own;
  return workspaceFetchFailureOf(part) === undefined ? undefined : fetchContainerOf(part)?.logStreamName;
}

/**
 * Why the workspace could not be fetched, when the task's fetch container ended with a non-zero exit code or
 * a reason (the role's container then never starts); undefined otherwise.
 *
 * @example
 * ```ts
 * workspaceFetchFailureOf(attempt);
 * // 'workspace fetch failed: exit code 1 (log stream train-42/default/ab12…)'
 * ```
 */
export function workspaceFetchFailureOf(part: Readonly<BatchContainersLike>): string | undefined {
  const fetch = fetchContainerOf(part);
  if (fetch === undefined || fetch.exitCode === 0) return undefined;
  if (fetch.exitCode === undefined && !fetch.reason) return undefined;
  const parts = [fetch.exitCode === undefined ? undefined : `exit code ${fetch.exitCode}`, fetch.reason];
  const stream = fetch.logStreamName ? ` (log stream ${fetch.logStreamName})` : '';
  return `workspace fetch failed: ${parts.filter((p) => p).join('; ')}${stream}`;
}

/**
 * The reason of one attempt or node as a replica or an attempt outcome shows it: Batch's own, the workspace
 * fetch's failure, then the role container's, joined by `; ` (empty when there is none).
 */
export function partReasonOf(part: Readonly<BatchContainersLike & { statusReason?: string }>): string {
  return [part.statusReason, workspaceFetchFailureOf(part), roleContainerOf(part)?.reason]
    .filter((reason) => reason)
    .join('; ');
}

/**
 * The exit code and reason of a part's role container, after its workspace fetch's failure if any:
 * what status shows after Batch's own reason.
 */
export function containerReasonsOf(part: Readonly<BatchContainersLike>): string[] {
  const reasons: string[] = [];
  const fetchFailure = workspaceFetchFailureOf(part);
  if (fetchFailure !== undefined) reasons.push(fetchFailure);
  const container = roleContainerOf(part);
  if (container?.exitCode !== undefined) reasons.push(`exit code ${container.exitCode}`);
  if (container?.reason) reasons.push(container.reason);
  return reasons;
}
