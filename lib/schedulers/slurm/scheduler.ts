/**
 * The `slurm` scheduler (port of TorchX's `SlurmScheduler`) over slurmrestd: dry runs produce TorchX's sbatch
 * script and the slurmrestd submission derived from it; run, describe, list, cancel and logs call slurmrestd
 * and read the job's output files.
 *
 * App ids are fixed at dry-run time (the runner records an app before submitting it): `<app name>-<random
 * id>`, carried by every heterogeneous-job group as its `wckey`. Describe and list find jobs by it.
 *
 * @module
 */
import { rm } from 'node:fs/promises';
import { basename, isAbsolute, join, relative } from 'node:path';
import {
  type AppDef,
  AppDryRunInfo,
  type Cfg,
  type DescribeAppResponse,
  isTerminal,
  type JobWorkspace,
  type ListAppResponse,
  makeUnique,
  type RunOpts,
  UnknownAppError,
  ValidationError,
} from '../../specs/index.js';
import { NotSupportedError, UnknownReplicaError, UnknownRoleError } from '../errors.js';
import type { LogPage, LogPageRequest } from '../logs.js';
import {
  RUNNING_CAPABILITIES,
  Scheduler,
  type SchedulerCapabilities,
  type SchedulerContext,
} from '../scheduler.js';
import { type SlurmRestClient, slurmNotConfigured } from './client.js';
import { describeSlurmJob, leaderIdOf, parseReplicaName, type SlurmJob } from './describe.js';
import { readLogFilePage } from './log-files.js';
import { type SlurmOpts, slurmRunOpts, slurmTimeToMinutes } from './options.js';
import { appStateFromSlurm } from './state.js';
import { type SlurmRequest, translateSlurm } from './translate.js';
import { requireJobDir, slurmWorkspaceOf, unpackIntoJobDir } from './workspace.js';

/** Makes the unique app id from the app name (TorchX `make_unique`); injectable so tests are deterministic. */
export type SlurmUniqueNamer = (prefix: string) => string;

/** The PATH jobs get when no environment is configured (slurmrestd requires an environment). */
export const DEFAULT_JOB_ENVIRONMENT: Readonly<Record<string, string>> = Object.freeze({
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
});

/** Construction options of {@link SlurmScheduler}. */
export interface SlurmSchedulerOptions {
  /** The slurmrestd client; without one, dry runs work and everything else explains how to configure it. */
  client?: SlurmRestClient;
  /** Where jobs run when `job_dir` is not given (on the cluster); `/tmp` by default. */
  workDir?: string;
  /** The batch step's environment; {@link DEFAULT_JOB_ENVIRONMENT} by default. */
  environment?: Record<string, string>;
  /** Slurm ≥ 24.11 (`--gpus-per-node`); false, as TorchX assumes off the cluster (`--gpus-per-task`). */
  gpusPerNode?: boolean;
  /**
   * Where this server sees the cluster's filesystem (a mount of the shared filesystem): log files are read
   * at `<logRoot>/<job working directory>/slurm-<id>-<role>-<replica>.<out|err>`. `/` by default.
   */
  logRoot?: string;
  uniqueNamer?: SlurmUniqueNamer;
}

/** An app's job as slurmctld holds it: the leader's id and every component. */
interface FoundJob {
  jobId: number;
  components: SlurmJob[];
}

/** Keeps letters, digits, `_` and `-` of an app name (the id is a wckey and part of a handle). */
export function appIdPrefix(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '-').replace(/^-+/, '') || 'app';
}

const APP_ID_PATTERN = /^[A-Za-z0-9_-]+-[0-9a-z]{6,16}$/;

/** The Slurm scheduler. */
export class SlurmScheduler extends Scheduler<SlurmOpts, SlurmRequest> {
  private readonly client: SlurmRestClient | undefined;
  private readonly workDir: string;
  private readonly environment: Record<string, string>;
  private readonly gpusPerNode: boolean;
  private readonly logRoot: string;
  private readonly uniqueNamer: SlurmUniqueNamer;
  /** Job ids of apps this instance submitted (saves a listing per describe). */
  private readonly jobIds = new Map<string, number>();

  constructor(context: SchedulerContext, options: SlurmSchedulerOptions = {}) {
    super('slurm', context);
    this.client = options.client;
    this.workDir = options.workDir ?? '/tmp';
    this.environment = { ...(options.environment ?? DEFAULT_JOB_ENVIRONMENT) };
    this.gpusPerNode = options.gpusPerNode ?? false;
    this.logRoot = options.logRoot ?? '/';
    this.uniqueNamer = options.uniqueNamer ?? ((prefix) => makeUnique(prefix));
  }

  override runOpts(): RunOpts {
    return slurmRunOpts();
  }

  override capabilities(): SchedulerCapabilities {
    return { ...RUNNING_CAPABILITIES, retries: true };
  }

  /**
   * TorchX skips validation for slurm (roles without a resource run with the partition's defaults); only a
   * malformed `time` is rejected here, before anything is recorded.
   */
  override validate(_app: AppDef, cfg: Readonly<Cfg> = {}): void {
    const time = cfg.time;
    if (typeof time === 'string') slurmTimeToMinutes(time);
  }

  /**
   * Takes a workspace kept on this server's disk: {@link schedule} unpacks it into `job_dir`, where the job
   * runs (TorchX's `DirWorkspaceMixin`).
   */
  override checkWorkspace(workspace: JobWorkspace): void {
    slurmWorkspaceOf(workspace);
  }

  protected override translate(
    app: AppDef,
    cfg: SlurmOpts,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<SlurmRequest> {
    if (workspace !== undefined) requireJobDir(cfg.job_dir);
    const request = translateSlurm(app, cfg, {
      appId: this.uniqueNamer(appIdPrefix(app.name)),
      workDir: this.workDir,
      environment: this.environment,
      gpusPerNode: this.gpusPerNode,
      nomem: false,
    });
    if (workspace !== undefined) request.workspace = slurmWorkspaceOf(workspace);
    // TorchX's rendering (SlurmBatchRequest.__repr__)
    const render = (r: SlurmRequest) =>
      `${[...r.cmd, '$SBATCH_SCRIPT'].join(' ')}\n\n#----------------\n# SBATCH_SCRIPT\n#----------------\n${r.script}`;
    return new AppDryRunInfo('slurm', app, cfg, request, render);
  }

  override appIdOf(dryrun: AppDryRunInfo<SlurmRequest>): string {
    return dryrun.request.appId;
  }

  private requireClient(): SlurmRestClient {
    if (this.client === undefined) throw slurmNotConfigured();
    return this.client;
  }

  /**
   * Submits the job; with a workspace, first unpacks it into `job_dir` (as this server sees the cluster's
   * filesystem: under `logRoot`), and removes that directory again when slurmrestd refuses the job.
   */
  override async schedule(dryrun: AppDryRunInfo<SlurmRequest>): Promise<string> {
    const client = this.requireClient();
    const { workspace, jobDir } = dryrun.request;
    const unpacked = workspace && join(this.logRoot, requireJobDir(jobDir));
    if (workspace && unpacked) await unpackIntoJobDir(workspace.archive, unpacked);
    try {
      const jobId = await client.submit(dryrun.request.slurmrestd.body);
      this.jobIds.set(dryrun.request.appId, jobId);
    } catch (error) {
      // refused for certain (a bad option): no job will run there; otherwise the job may run, so keep it
      if (unpacked && error instanceof ValidationError) await rm(unpacked, { recursive: true, force: true });
      throw error;
    }
    return dryrun.request.appId;
  }

  /** The app's job: by the remembered id when this instance submitted it, else by listing (wckey). */
  private async find(appId: string): Promise<FoundJob | undefined> {
    const client = this.requireClient();
    const known = this.jobIds.get(appId);
    if (known !== undefined) {
      const components = (await client.job(known))?.filter((job) => job.wckey === appId);
      if (components !== undefined && components.length > 0) return { jobId: known, components };
    }
    if (!APP_ID_PATTERN.test(appId)) return undefined;
    const mine = (await client.jobs()).filter((job) => job.wckey === appId);
    if (mine.length === 0) return undefined;
    const jobId = Math.max(...mine.map(leaderIdOf));
    this.jobIds.set(appId, jobId);
    return { jobId, components: mine.filter((job) => leaderIdOf(job) === jobId) };
  }

  override async describe(appId: string): Promise<DescribeAppResponse | undefined> {
    const found = await this.find(appId);
    return found === undefined ? undefined : describeSlurmJob(appId, found.components);
  }

  override async list(): Promise<ListAppResponse[]> {
    const leaders = new Map<number, SlurmJob>();
    for (const job of await this.requireClient().jobs()) {
      if (job.wckey === undefined || !APP_ID_PATTERN.test(job.wckey)) continue;
      const leaderId = leaderIdOf(job);
      if (job.job_id === leaderId || !leaders.has(leaderId)) leaders.set(leaderId, job);
    }
    return [...leaders.values()].map((job) => {
      const appId = job.wckey as string;
      return {
        appId,
        state: appStateFromSlurm(job.job_state),
        appHandle: '<NOT_SET>',
        name: appId.slice(0, appId.lastIndexOf('-')),
      };
    });
  }

  protected override async cancelExisting(appId: string): Promise<void> {
    const found = await this.find(appId);
    if (found !== undefined) await this.requireClient().cancel(found.jobId);
  }

  /**
   * Reads a replica's output file. `stdout` reads `.out`, `stderr` (the default, as in TorchX) `.err`;
   * `combined` is refused as TorchX refuses it (srun writes the two streams to separate files).
   */
  protected override async fetchLogPage(appId: string, request: LogPageRequest): Promise<LogPage> {
    if (request.streams === 'combined') {
      throw ValidationError.forField(
        'streams',
        'slurm does not support the combined log stream (srun writes stdout and stderr to separate files); use stdout or stderr',
      );
    }
    const found = await this.find(appId);
    if (found === undefined) throw new UnknownAppError(appId);
    const replicas = new Map<string, number>();
    for (const job of found.components) {
      const parsed = parseReplicaName(job.name);
      if (parsed) replicas.set(parsed[0], (replicas.get(parsed[0]) ?? 0) + 1);
    }
    const count = replicas.get(request.role);
    if (count === undefined) throw new UnknownRoleError(request.role, [...replicas.keys()]);
    const replica = request.replica ?? 0;
    if (!Number.isInteger(replica) || replica < 0 || replica >= count) {
      throw new UnknownReplicaError(request.role, replica, count);
    }
    const leader = found.components.find((job) => job.job_id === found.jobId) ?? found.components[0];
    const cwd = leader?.current_working_directory ?? this.workDir;
    const extension = request.streams === 'stdout' ? 'out' : 'err';
    const name = `slurm-${found.jobId}-${request.role}-${replica}.${extension}`;
    // a role name is part of a file name: never let one leave the job's directory
    if (basename(name) !== name) throw new UnknownRoleError(request.role, [...replicas.keys()]);
    const file = join(this.logRoot, cwd, name);
    // the working directory is Slurm's; never read outside the log root, whatever it says
    if (relative(this.logRoot, file).startsWith('..') || isAbsolute(relative(this.logRoot, file))) {
      throw new NotSupportedError(
        `slurm job ${found.jobId} runs outside the readable log root ${this.logRoot}`,
      );
    }
    const finished = isTerminal(appStateFromSlurm(leader?.job_state));
    const options: { nextToken?: string; limit?: number; finished: boolean } = { finished };
    if (request.nextToken !== undefined) options.nextToken = request.nextToken;
    if (request.limit !== undefined) options.limit = request.limit;
    return readLogFilePage(file, options);
  }
}

/** Builds the slurm scheduler (the registry's factory signature plus options). */
export function createSlurmScheduler(
  context: SchedulerContext,
  options: SlurmSchedulerOptions = {},
): SlurmScheduler {
  return new SlurmScheduler(context, options);
}
