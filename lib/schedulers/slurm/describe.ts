/**
 * Maps slurmrestd's job records (the components of one heterogeneous job) to a DescribeAppResponse: one
 * role per `<role>-<replica>` component name, a replica status per component (state, host, exit code), the
 * app's state from the job's leader (TorchX `_describe_squeue`).
 *
 * @module
 */
import {
  type AppState,
  type DescribeAppResponse,
  isTerminal,
  makeDescribeAppResponse,
  makeRole,
  makeStateReason,
  NONE,
  type ReplicaStatus,
  type Role,
  type RoleStatus,
} from '../../specs/index.js';
import { appStateFromSlurm, decodeWaitStatus } from './state.js';

/** The fields of slurmrestd v0.0.38's `v0.0.38_job_response_properties` the scheduler reads. */
export interface SlurmJob {
  job_id: number;
  name: string;
  job_state: string | string[];
  state_reason?: string;
  state_description?: string;
  exit_code?: number;
  derived_exit_code?: number;
  het_job_id?: number;
  het_job_offset?: number;
  nodes?: string;
  batch_host?: string;
  command?: string;
  current_working_directory?: string;
  restart_cnt?: number;
  wckey?: string;
  submit_time?: number;
  start_time?: number;
  end_time?: number;
}

/** The leader's id of a (heterogeneous) job: `het_job_id` when set (non-zero), else `job_id`. */
export function leaderIdOf(job: SlurmJob): number {
  return job.het_job_id !== undefined && job.het_job_id > 0 ? job.het_job_id : job.job_id;
}

/** `role-3` → `['role', 3]` (TorchX's `rpartition('-')`); undefined for names TorchX did not write. */
export function parseReplicaName(name: string): [string, number] | undefined {
  const dash = name.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const id = Number(name.slice(dash + 1));
  return Number.isInteger(id) && id >= 0 ? [name.slice(0, dash), id] : undefined;
}

function reasonOf(job: SlurmJob): string | undefined {
  const reason = job.state_reason;
  return reason && reason !== 'None' ? reason : undefined;
}

/**
 * Describes the app made of `components` (every record of one heterogeneous job, leader first or not).
 * The leader's `state_reason` (`Priority`, `Resources`, `QOSMaxJobsPerUserLimit` …) becomes the state
 * reason: its code, with `state_description` as the text when Slurm gives one; it holds since `now` (Slurm
 * does not say when it set the reason; the record keeps the first time it was seen) or, once the job
 * ended, since its `end_time`.
 *
 * @param appId the app id the components carry (their `wckey`).
 * @param now epoch ms
 */
export function describeSlurmJob(
  appId: string,
  components: readonly SlurmJob[],
  now: number = Date.now(),
): DescribeAppResponse {
  const sorted = [...components].sort((a, b) => (a.het_job_offset ?? 0) - (b.het_job_offset ?? 0));
  const leader = sorted[0];
  if (leader === undefined) throw new TypeError('describeSlurmJob needs at least one job record');
  const state: AppState = appStateFromSlurm(leader.job_state);
  const roles = new Map<string, Role>();
  const statuses = new Map<string, RoleStatus>();
  for (const job of sorted) {
    const parsed = parseReplicaName(job.name);
    if (parsed === undefined) continue;
    const [roleName, id] = parsed;
    let role = roles.get(roleName);
    if (role === undefined) {
      role = makeRole({
        name: roleName,
        image: job.current_working_directory ?? '',
        entrypoint: job.command ?? '',
        numReplicas: 0,
      });
      roles.set(roleName, role);
      statuses.set(roleName, { role: roleName, replicas: [] });
    }
    role.numReplicas += 1;
    const replica: ReplicaStatus = {
      id,
      role: roleName,
      state: appStateFromSlurm(job.job_state),
      hostname: job.nodes ?? '',
      structuredErrorMsg: NONE,
    };
    // derived_exit_code is the highest exit status of the component's own steps; exit_code is the batch
    // script's, repeated on every component
    const status = job.derived_exit_code ?? job.exit_code;
    if (status !== undefined && (replica.state === 'SUCCEEDED' || replica.state === 'FAILED')) {
      replica.exitCode = decodeWaitStatus(status).exitCode;
    }
    const reason = reasonOf(job);
    if (reason !== undefined) replica.reason = reason;
    statuses.get(roleName)?.replicas.push(replica);
  }
  const jobId = leaderIdOf(leader);
  let msg = `slurm job ${jobId}: ${Array.isArray(leader.job_state) ? leader.job_state.join(',') : leader.job_state}`;
  const reason = reasonOf(leader);
  if (reason !== undefined) msg += ` (${reason})`;
  if (state === 'FAILED' && leader.exit_code !== undefined) {
    const exit = decodeWaitStatus(leader.exit_code);
    msg += exit.signal === undefined ? `, exit code ${exit.exitCode}` : `, killed by signal ${exit.signal}`;
  }
  const desc = makeDescribeAppResponse({
    appId,
    state,
    numRestarts: leader.restart_cnt ?? 0,
    msg,
    roles: [...roles.values()],
    rolesStatuses: [...statuses.values()],
    metadata: {
      slurm_job_id: String(jobId),
      working_directory: leader.current_working_directory ?? '',
    },
  });
  // when the state last changed; a running or pending job's end_time is Slurm's forecast, not an event
  const changed = isTerminal(state)
    ? leader.end_time
    : state === 'RUNNING'
      ? leader.start_time
      : leader.submit_time;
  if (changed !== undefined && changed > 0) desc.updatedAt = changed * 1000;
  desc.attempt = leader.restart_cnt ?? 0;
  if (reason !== undefined) {
    const ended = isTerminal(state) && leader.end_time !== undefined && leader.end_time > 0;
    const text = leader.state_description ? `${reason}: ${leader.state_description}` : reason;
    const stateReason = makeStateReason('slurm', text, ended ? (leader.end_time ?? 0) * 1000 : now, reason);
    if (stateReason !== undefined) desc.stateReason = stateReason;
  }
  return desc;
}
