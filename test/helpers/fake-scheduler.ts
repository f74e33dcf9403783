/**
 * FakeScheduler: a real subclass of Scheduler whose "backend" is an in-memory job table the test drives
 * (advance states, append log lines). Used to test the Runner and the handlers without AWS.
 */
import {
  type LogPage,
  type LogPageRequest,
  Scheduler,
  type SchedulerCapabilities,
  type SchedulerContext,
  UnknownRoleError,
} from '../../lib/schedulers/index.js';
import {
  type AppDef,
  AppDryRunInfo,
  type AppState,
  type Cfg,
  type DescribeAppResponse,
  type ListAppResponse,
  makeDescribeAppResponse,
  makeUnique,
  type RoleStatus,
  RunOpts,
} from '../../lib/specs/index.js';

export interface FakeRequest {
  jobName: string;
  queue: string;
  roles: { name: string; replicas: number; command: string[] }[];
}

export interface FakeJob {
  request: FakeRequest;
  state: AppState;
  attempt: number;
  updatedAt: number;
  logs: Map<string, string[]>;
  cancelReasons: string[];
  deleted: boolean;
  /** Replica statuses describe reports (none when absent). */
  roles?: RoleStatus[];
  /** The message describe reports (else the first cancel reason). */
  msg?: string;
}

export class FakeScheduler extends Scheduler<Cfg, FakeRequest> {
  readonly jobs = new Map<string, FakeJob>();
  readonly calls: string[] = [];
  private counter = 0;
  /** When set, the next schedule() call throws it. */
  failNextSchedule: Error | undefined;
  /**
   * When set, the next schedule() call never answers (a hung backend, or a process that died mid-call):
   * `before-accept` before the job exists, `after-accept` once it does.
   */
  hangNextSchedule: 'before-accept' | 'after-accept' | undefined;

  constructor(context: SchedulerContext, name = 'fake') {
    super(name, context);
  }

  runOpts(): RunOpts {
    return new RunOpts()
      .add('queue', { type: 'str', required: true, help: 'queue to submit to' })
      .add('priority', { type: 'int', default: 0, help: 'priority' });
  }

  capabilities(): SchedulerCapabilities {
    return {
      cancel: true,
      logs: true,
      describe: 'full',
      distributed: true,
      mounts: false,
      retries: true,
      elasticity: false,
    };
  }

  protected translate(app: AppDef, cfg: Cfg): AppDryRunInfo<FakeRequest> {
    this.counter += 1;
    const request: FakeRequest = {
      jobName: makeUnique(app.name, `id${this.counter}`),
      queue: cfg.queue as string,
      roles: app.roles.map((r) => ({
        name: r.name,
        replicas: r.numReplicas,
        command: [r.entrypoint, ...r.args],
      })),
    };
    return new AppDryRunInfo(this.backend, app, cfg, request);
  }

  appIdOf(dryrun: AppDryRunInfo<FakeRequest>): string {
    return `${dryrun.request.queue}:${dryrun.request.jobName}`;
  }

  override nativeNameOf(appId: string): string {
    return appId.slice(appId.lastIndexOf(':') + 1);
  }

  async schedule(dryrun: AppDryRunInfo<FakeRequest>): Promise<string> {
    this.calls.push('schedule');
    if (this.failNextSchedule) {
      const error = this.failNextSchedule;
      this.failNextSchedule = undefined;
      throw error;
    }
    const hang = this.hangNextSchedule;
    this.hangNextSchedule = undefined;
    if (hang === 'before-accept') return new Promise<string>(() => {});
    const appId = this.appIdOf(dryrun);
    this.jobs.set(appId, {
      request: dryrun.request,
      state: 'PENDING',
      attempt: 0,
      updatedAt: this.now(),
      logs: new Map(),
      cancelReasons: [],
      deleted: false,
    });
    if (hang === 'after-accept') return new Promise<string>(() => {});
    return appId;
  }

  async describe(appId: string): Promise<DescribeAppResponse | undefined> {
    this.calls.push('describe');
    const job = this.jobs.get(appId);
    if (!job || job.deleted) return undefined;
    return makeDescribeAppResponse({
      appId,
      state: job.state,
      numRestarts: job.attempt,
      attempt: job.attempt,
      updatedAt: job.updatedAt,
      msg: job.msg ?? job.cancelReasons[0] ?? '<NONE>',
      ...(job.roles === undefined ? {} : { rolesStatuses: job.roles }),
    });
  }

  async list(): Promise<ListAppResponse[]> {
    return [...this.jobs.entries()].map(([appId, job]) => ({
      appId,
      state: job.state,
      appHandle: '<NOT_SET>',
      name: job.request.jobName,
    }));
  }

  protected async cancelExisting(appId: string, reason: string): Promise<void> {
    this.calls.push('cancel');
    const job = this.jobs.get(appId);
    if (job) {
      job.cancelReasons.push(reason);
      job.state = 'CANCELLED';
      job.updatedAt = this.now();
    }
  }

  protected override async deleteExisting(appId: string): Promise<void> {
    await this.cancel(appId);
    const job = this.jobs.get(appId);
    if (job) job.deleted = true;
  }

  protected override async fetchLogPage(appId: string, request: LogPageRequest): Promise<LogPage> {
    const job = this.jobs.get(appId);
    if (!job) return { lines: [], caughtUp: true };
    const known = job.request.roles.map((r) => r.name);
    if (!known.includes(request.role)) throw new UnknownRoleError(request.role, known);
    const lines = job.logs.get(`${request.role}/${request.replica ?? 0}`) ?? [];
    const offset = request.nextToken ? Number(request.nextToken) : 0;
    const limit = request.limit ?? 1000;
    const page = lines.slice(offset, offset + limit);
    const end = offset + page.length;
    const caughtUp = end >= lines.length;
    const terminal = ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.state);
    return caughtUp && terminal
      ? { lines: page, caughtUp }
      : { lines: page, caughtUp, nextToken: String(end) };
  }

  /** Test control: move a job to a state. */
  advance(appId: string, state: AppState, attempt?: number): void {
    const job = this.jobs.get(appId);
    if (!job) throw new Error(`no job ${appId}`);
    job.state = state;
    if (attempt !== undefined) job.attempt = attempt;
    job.updatedAt = this.now();
  }

  /** Test control: append log lines for a replica. */
  log(appId: string, role: string, replica: number, ...lines: string[]): void {
    const job = this.jobs.get(appId);
    if (!job) throw new Error(`no job ${appId}`);
    const key = `${role}/${replica}`;
    job.logs.set(key, [...(job.logs.get(key) ?? []), ...lines]);
  }
}
