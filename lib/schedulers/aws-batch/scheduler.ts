/**
 * The `aws_batch` scheduler: runs an AppDef as one AWS Batch multi-node parallel job (one node group per
 * role), and answers describe, list, cancel, delete and logs for it. Port of TorchX's `AWSBatchScheduler`;
 * see `docs/schedulers/aws-batch.md` for the differences.
 *
 * @module
 */
import {
  BatchClient,
  CancelJobCommand,
  DeregisterJobDefinitionCommand,
  DescribeJobQueuesCommand,
  DescribeJobsCommand,
  type JobDetail,
  ListJobsCommand,
  type ListJobsCommandOutput,
  RegisterJobDefinitionCommand,
  type RegisterJobDefinitionCommandInput,
  SubmitJobCommand,
  type SubmitJobCommandInput,
  TerminateJobCommand,
} from '@aws-sdk/client-batch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import {
  type AppDryRunInfo,
  type AppState,
  type DescribeAppResponse,
  isTerminal,
  type ListAppResponse,
  makeAppHandle,
  makeDescribeAppResponse,
  NONE,
  type RoleStatus,
  UnknownAppError,
  ValidationError,
} from '../../specs/index.js';
import { InvalidLogTokenError, UnknownReplicaError, UnknownRoleError } from '../errors.js';
import {
  DEFAULT_LOG_PAGE_SIZE,
  decodeLogToken,
  encodeLogToken,
  type LogPage,
  type LogPageRequest,
  MAX_LOG_PAGE_SIZE,
} from '../logs.js';
import { type LogsClientSource, logsClientOf } from '../logs-client.js';
import type { SchedulerContext } from '../scheduler.js';
import { SubmittingScheduler } from '../submitting.js';
import { type BatchAppId, parseBatchAppId, sameQueue } from './app-id.js';
import { TORCHX_APP_NAME_TAG } from './checks.js';
import {
  type NodeGroup,
  nodeGroupsOf,
  nodeIndexOf,
  rangeContainerOf,
  replicaStatusOf,
  rolesOf,
} from './describe-mapping.js';
import { isLogCursor, type LogCursor, positionAt, streamsOf } from './log-cursor.js';
import { type AwsBatchOpts, queueNameOf } from './options.js';
import { isAccessDenied, isClientException, type SdkCall, toSchedulerError } from './sdk-errors.js';
import {
  batchConsoleUrl,
  batchStateOf,
  batchTransitionOf,
  CANCEL_REASON_PREFIX,
  parseEpochMs,
} from './state.js';
import {
  type AwsBatchRequest,
  DEFAULT_LOG_GROUP,
  isSharedDefinition,
  TORCHX_VERSION_TAG,
} from './translate.js';
import { AwsBatchTranslator, type AwsBatchTranslatorOptions } from './translator.js';

/** Most job ids DescribeJobs accepts per call. */
export const DESCRIBE_JOBS_BATCH = 100;
/** Longest reason CancelJob/TerminateJob accept. */
export const MAX_CANCEL_REASON_LENGTH = 1024;
/** How long after a node stops its log is still read for late lines before the log counts as complete. */
export const LOG_SETTLE_MS = 30_000;
/** Default look-back of {@link AwsBatchScheduler.list}. */
export const DEFAULT_LIST_WINDOW_DAYS = 30;

const DAY_MS = 86_400_000;
const PRE_START_STATUSES = new Set(['SUBMITTED', 'PENDING', 'RUNNABLE']);
const STARTED_STATUSES = new Set(['STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED']);

/** Options of {@link createAwsBatchScheduler}: the translation's, and the clients and the listing's. */
export interface AwsBatchSchedulerOptions extends AwsBatchTranslatorOptions {
  /** Batch client; a shared default (5 attempts, adaptive retry) is built once when omitted. */
  batchClient?: BatchClient;
  /**
   * CloudWatch Logs client, or a function that builds it when a log is first read; a shared default is built
   * then when omitted.
   */
  logsClient?: LogsClientSource;
  /** Queues {@link AwsBatchScheduler.list} scans; every queue of the account (DescribeJobQueues) when omitted. */
  queues?: readonly string[];
  /** How far back {@link AwsBatchScheduler.list} looks (days, by creation time); 30 by default. */
  listWindowDays?: number;
}

/** How many job ids of apps one scheduler instance remembers (the oldest is forgotten first). */
const MAX_REMEMBERED_JOB_IDS = 4096;
/** How many shared job-definition ARNs one scheduler instance remembers (the oldest is forgotten first). */
const MAX_REMEMBERED_DEFINITIONS = 512;

let sharedBatchClient: BatchClient | undefined;

/** The default Batch client: built once per process, 5 attempts with adaptive retry (client-side rate limit). */
export function defaultBatchClient(): BatchClient {
  sharedBatchClient ??= new BatchClient({ maxAttempts: 5, retryMode: 'adaptive' });
  return sharedBatchClient;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * AWS Batch scheduler (`aws_batch`). Build it with {@link createAwsBatchScheduler}.
 *
 * @example
 * ```ts
 * const batch = createAwsBatchScheduler({ sessionName: 'torchx' }, { defaultUser: 'alice' });
 * const info = batch.submitDryrun(app, { queue: 'gpu' });  // pure: info.request is the exact SDK input
 * const appId = await batch.schedule(info);                 // 'gpu:train-t4rcs9x6sv1m'
 * const status = await batch.describe(appId);
 * for await (const line of batch.logIter(appId, { role: 'trainer', replica: 0, tail: true })) console.log(line);
 * ```
 */
export class AwsBatchScheduler extends SubmittingScheduler<AwsBatchOpts, AwsBatchRequest> {
  private readonly batch: BatchClient;
  /** The Logs client, built (and its code imported) when a log is first read. */
  private readonly logs: () => Promise<CloudWatchLogsClient>;
  private readonly queues: readonly string[] | undefined;
  private readonly listWindowMs: number;
  /** Job ids of apps this instance submitted or found, by app id (insertion order; the oldest forgotten first). */
  private readonly jobIds = new Map<string, string>();
  /** Shared job definitions registered by this instance: content-hash name → revision ARN (insertion order). */
  private readonly definitionArns = new Map<string, string>();

  constructor(context: SchedulerContext, options: AwsBatchSchedulerOptions = {}) {
    super(new AwsBatchTranslator(context, options), context);
    this.batch = options.batchClient ?? defaultBatchClient();
    this.logs = logsClientOf(options.logsClient, 'adaptive');
    this.queues = options.queues && options.queues.length > 0 ? [...options.queues] : undefined;
    this.listWindowMs = (options.listWindowDays ?? DEFAULT_LIST_WINDOW_DAYS) * DAY_MS;
  }

  /**
   * Submits the job with its registered job definition. A shared definition (named by content hash, so one
   * name is one content) is registered once per scheduler instance and its ARN remembered: a repeated
   * definition costs one SubmitJob, a new one RegisterJobDefinition + SubmitJob, and nothing on this path
   * asks Batch what exists (no DescribeJobDefinitions). A remembered revision deregistered since (by a delete
   * elsewhere) is registered anew when SubmitJob rejects it.
   *
   * @throws ValidationError naming `cfg.queue` when Batch does not know the queue; BackendError and
   *   BackendAccessDeniedError for other AWS failures.
   */
  override async schedule(dryrun: AppDryRunInfo<AwsBatchRequest>): Promise<string> {
    const { registerJobDefinition, submitJob } = dryrun.request;
    const sharedName = isSharedDefinition(dryrun.request)
      ? registerJobDefinition.jobDefinitionName
      : undefined;
    const remembered = sharedName === undefined ? undefined : this.definitionArns.get(sharedName);
    const definition = remembered ?? (await this.registerDefinition(registerJobDefinition, sharedName));
    const appId = this.appIdOf(dryrun);
    try {
      this.rememberJob(appId, await this.submitJob({ ...submitJob, jobDefinition: definition }));
    } catch (error) {
      const cause = error instanceof Error ? error.cause : undefined;
      const definitionGone =
        isClientException(cause) && /definition/i.test((cause as Error).message) && !isAccessDenied(cause);
      if (remembered === undefined || !definitionGone) throw error;
      this.forgetDefinition(remembered);
      const fresh = await this.registerDefinition(registerJobDefinition, sharedName);
      this.rememberJob(appId, await this.submitJob({ ...submitJob, jobDefinition: fresh }));
    }
    return appId;
  }

  /** Describes the app: state, restarts, message, console URL, roles and per-replica statuses from the node jobs. */
  override async describe(appId: string): Promise<DescribeAppResponse | undefined> {
    const job = await this.findJob(appId);
    return job === undefined ? undefined : this.describeJob(appId, job);
  }

  /**
   * Describes many apps with DescribeJobs calls of up to 100 jobs: the jobs whose ids this instance knows
   * (from SubmitJob's answer or an earlier lookup) are described together; any other app is found by name
   * ({@link describe}).
   */
  override async describeMany(
    appIds: readonly string[],
  ): Promise<PromiseSettledResult<DescribeAppResponse | undefined>[]> {
    const known = appIds.flatMap((appId) => {
      const jobId = this.jobIds.get(appId);
      return jobId === undefined ? [] : [jobId];
    });
    const jobs = new Map<string, JobDetail>();
    for (const job of await this.describeJobs(known)) if (job.jobId !== undefined) jobs.set(job.jobId, job);
    return Promise.all(
      appIds.map(async (appId): Promise<PromiseSettledResult<DescribeAppResponse | undefined>> => {
        try {
          const jobId = this.jobIds.get(appId);
          const job = jobId === undefined ? undefined : jobs.get(jobId);
          const value = job === undefined ? await this.describe(appId) : await this.describeJob(appId, job);
          return { status: 'fulfilled', value };
        } catch (reason) {
          return { status: 'rejected', reason };
        }
      }),
    );
  }

  /** The app `appId` is, from its described job (and its node jobs, for a started multi-node job). */
  private async describeJob(appId: string, job: JobDetail): Promise<DescribeAppResponse> {
    const nodes = await this.describeNodes(job);
    const transition = batchTransitionOf(job, 'describe', this.now());
    const rolesStatuses: RoleStatus[] = nodeGroupsOf(job).map(({ role, start, numReplicas }) => ({
      role,
      replicas: Array.from({ length: numReplicas }, (_, id) =>
        replicaStatusOf(role, id, nodes.get(start + id), transition.state),
      ),
    }));
    const response = makeDescribeAppResponse({
      appId,
      state: transition.state,
      numRestarts: transition.numRestarts ?? 0,
      msg: failureMessage(transition.state, transition.reason, rolesStatuses) ?? NONE,
      roles: rolesOf(job),
      rolesStatuses,
      updatedAt: transition.eventTime,
    });
    if (transition.stateReason !== undefined) response.stateReason = transition.stateReason;
    if (transition.attemptOutcomes !== undefined) response.attemptOutcomes = transition.attemptOutcomes;
    const uiUrl = batchConsoleUrl(job.jobArn);
    if (uiUrl !== undefined) response.uiUrl = uiUrl;
    return response;
  }

  /**
   * Lists the torchx jobs (tagged `torchx.pytorch.org/version`) created in the last `listWindowDays` on the
   * configured queues, or on every queue of the account.
   */
  override async list(): Promise<ListAppResponse[]> {
    const queues = this.queues ?? (await this.allQueues());
    const createdAfter = String(Math.max(this.now() - this.listWindowMs, 0));
    const perQueue = await Promise.all(queues.map((queue) => this.listQueue(queue, createdAfter)));
    return perQueue.flat();
  }

  /** True when Batch knows the job (one lookup, no node calls). */
  override async exists(appId: string): Promise<boolean> {
    return (await this.findJob(appId)) !== undefined;
  }

  /**
   * Cancels the app: CancelJob before it starts, TerminateJob once STARTING or RUNNING. The reason is recorded
   * as the job's statusReason (prefixed so describe reports CANCELLED). A no-op for unknown or finished apps.
   */
  override async cancel(appId: string, reason = 'cancelled via torchx-serverless'): Promise<void> {
    const job = await this.findJob(appId);
    if (job === undefined || isTerminal(batchStateOf(job))) return;
    await this.stopJob(job, reason);
  }

  protected override async cancelExisting(appId: string, reason: string): Promise<void> {
    await this.cancel(appId, reason);
  }

  /**
   * Cancels the job if it is live, then deregisters the job definition revision it ran with (an already
   * inactive revision is fine). A no-op for an unknown app.
   */
  override async delete(appId: string): Promise<void> {
    const job = await this.findJob(appId);
    if (job !== undefined) await this.deleteJob(job);
  }

  protected override async deleteExisting(appId: string): Promise<void> {
    await this.delete(appId);
  }

  private async deleteJob(job: JobDetail): Promise<void> {
    if (!isTerminal(batchStateOf(job))) await this.stopJob(job, 'deleted via torchx-serverless');
    this.forgetDefinition(job.jobDefinition);
    try {
      await this.batch.send(new DeregisterJobDefinitionCommand({ jobDefinition: job.jobDefinition }));
    } catch (error) {
      const alreadyGone =
        isClientException(error) &&
        !isAccessDenied(error) &&
        /inactive|not found|does not exist/i.test((error as Error).message);
      if (!alreadyGone) {
        throw toSchedulerError(error, { service: 'batch', action: 'DeregisterJobDefinition' });
      }
    }
  }

  /**
   * One page of a replica's log from CloudWatch Logs. The replica's node is the role's first node index plus
   * `replica`; its stream is the latest attempt's (and the page moves on to a newer attempt's stream once the
   * current one is read). The page token is opaque and bound to the app, role and replica.
   *
   * @throws ValidationError naming `streams` for anything but `combined`; UnknownRoleError;
   *   UnknownReplicaError; InvalidLogTokenError; UnknownAppError when Batch does not know the app.
   */
  protected override async fetchLogPage(appId: string, request: LogPageRequest): Promise<LogPage> {
    if (request.streams !== undefined && request.streams !== 'combined') {
      throw ValidationError.forField(
        'streams',
        `AWS Batch writes stdout and stderr to one CloudWatch stream; use 'combined', not '${request.streams}'`,
      );
    }
    const limit = request.limit ?? DEFAULT_LOG_PAGE_SIZE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOG_PAGE_SIZE) {
      throw ValidationError.forField(
        'limit',
        `must be a whole number from 1 to ${MAX_LOG_PAGE_SIZE}, got ${limit}`,
      );
    }
    const replica = request.replica ?? 0;
    const id = parseBatchAppId(appId);
    const unknownApp = () => new UnknownAppError(makeAppHandle(this.backend, this.sessionName, appId));
    if (id === undefined) throw unknownApp();

    const cursor = request.nextToken === undefined ? undefined : this.decodeCursor(request, replica);
    let parent: JobDetail | undefined;
    let node: JobDetail | undefined;
    let nodeIndex: number;
    let group: NodeGroup;
    if (cursor === undefined) {
      parent = await this.findJob(appId);
      if (parent === undefined) throw unknownApp();
      group = this.nodeGroupFor(parent, request.role, replica);
      nodeIndex = group.start + replica;
      if (STARTED_STATUSES.has(parent.status ?? '')) {
        [node] = await this.describeJobs([`${parent.jobId}#${nodeIndex}`]);
      }
    } else {
      const jobs = await this.describeJobs([cursor.job, `${cursor.job}#${cursor.node}`]);
      parent = jobs.find((j) => j.jobId === cursor.job);
      node = jobs.find((j) => j.jobId === `${cursor.job}#${cursor.node}`);
      if (parent === undefined || parent.jobName !== id.jobName || !sameQueue(parent.jobQueue, id.queue)) {
        throw new InvalidLogTokenError();
      }
      group = this.nodeGroupFor(parent, request.role, replica);
      nodeIndex = group.start + replica;
      if (nodeIndex !== cursor.node) throw new InvalidLogTokenError();
    }

    const streams = streamsOf(node);
    if (cursor?.stream !== undefined && !streams.includes(cursor.stream)) throw new InvalidLogTokenError();
    const position: LogCursor = {
      v: 1,
      job: parent.jobId ?? '',
      role: request.role,
      replica,
      node: nodeIndex,
    };
    const [{ readLogStreams, toLogPage }, client] = await Promise.all([
      import('../cloudwatch-logs.js'),
      this.logs(),
    ]);
    const page = await readLogStreams({
      client,
      logGroup:
        rangeContainerOf(group.range)?.logConfiguration?.options?.['awslogs-group'] ?? DEFAULT_LOG_GROUP,
      // A first read starts at the latest attempt's stream (the node's current log, as TorchX reads it); a
      // token goes on from its stream through the newer attempts' streams.
      streams: cursor?.stream === undefined ? streams.slice(-1) : streams,
      cursor: { stream: cursor?.stream, token: cursor?.cw },
      limit,
      since: request.since,
      until: request.until,
      finished: this.isSettled(node ?? parent),
      call: (action, send) => this.call(action, send, 'logs'),
    });
    return toLogPage(page, (at) => encodeLogToken(positionAt(position, at)));
  }

  private decodeCursor(request: LogPageRequest, replica: number): LogCursor {
    const cursor = decodeLogToken(request.nextToken ?? '');
    if (!isLogCursor(cursor) || cursor.role !== request.role || cursor.replica !== replica) {
      throw new InvalidLogTokenError();
    }
    return cursor;
  }

  private nodeGroupFor(job: JobDetail, role: string, replica: number): NodeGroup {
    const groups = nodeGroupsOf(job);
    const group = groups.find((g) => g.role === role);
    if (group === undefined)
      throw new UnknownRoleError(
        role,
        groups.map((g) => g.role),
      );
    if (!Number.isInteger(replica) || replica < 0 || replica >= group.numReplicas) {
      throw new UnknownReplicaError(role, replica, group.numReplicas);
    }
    return group;
  }

  /** True when the job is finished and has been for {@link LOG_SETTLE_MS} (late log lines have arrived). */
  private isSettled(job: JobDetail): boolean {
    if (!isTerminal(batchStateOf(job))) return false;
    const stoppedAt = parseEpochMs(job.stoppedAt);
    return stoppedAt === undefined || this.now() - stoppedAt >= LOG_SETTLE_MS;
  }

  /** Runs a Batch (or CloudWatch Logs) call, mapping SDK errors to scheduler errors. */
  private async call<T>(
    action: string,
    run: () => Promise<T>,
    service: SdkCall['service'] = 'batch',
  ): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toSchedulerError(error, { service, action } satisfies SdkCall);
    }
  }

  /** Registers a definition; a shared one's ARN is remembered under its content-hash name. */
  private async registerDefinition(
    input: RegisterJobDefinitionCommandInput,
    sharedName: string | undefined,
  ): Promise<string> {
    const response = await this.call('RegisterJobDefinition', () =>
      this.batch.send(new RegisterJobDefinitionCommand(input)),
    );
    const arn = response.jobDefinitionArn ?? `${response.jobDefinitionName}:${response.revision}`;
    if (sharedName !== undefined) {
      if (this.definitionArns.size >= MAX_REMEMBERED_DEFINITIONS) {
        const oldest = this.definitionArns.keys().next().value;
        if (oldest !== undefined) this.definitionArns.delete(oldest);
      }
      this.definitionArns.set(sharedName, arn);
    }
    return arn;
  }

  /** Forgets a remembered definition revision (deregistered, or rejected by SubmitJob). */
  private forgetDefinition(arn: string | undefined): void {
    for (const [name, remembered] of this.definitionArns) {
      if (remembered === arn) this.definitionArns.delete(name);
    }
  }

  /** Remembers the job id of an app, so {@link describeMany} describes it without looking it up by name. */
  private rememberJob(appId: string, jobId: string | undefined): void {
    if (jobId === undefined) return;
    this.jobIds.delete(appId);
    if (this.jobIds.size >= MAX_REMEMBERED_JOB_IDS) {
      const oldest = this.jobIds.keys().next().value;
      if (oldest !== undefined) this.jobIds.delete(oldest);
    }
    this.jobIds.set(appId, jobId);
  }

  /** Submits the job; its job id. */
  private async submitJob(input: SubmitJobCommandInput): Promise<string | undefined> {
    try {
      return (await this.batch.send(new SubmitJobCommand(input))).jobId;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (isClientException(error) && !isAccessDenied(error) && /queue/i.test(message)) {
        throw new ValidationError(
          `cfg.queue: AWS Batch rejected job queue '${input.jobQueue}' (${message}); give the name or ARN of an existing queue`,
          [{ path: 'cfg.queue', message: `AWS Batch rejected job queue '${input.jobQueue}': ${message}` }],
          { cause: error },
        );
      }
      throw toSchedulerError(error, { service: 'batch', action: 'SubmitJob' });
    }
  }

  /** The newest job named like the app id on its queue (ListJobs JOB_NAME filter, exact match), described. */
  private async findJob(appId: string): Promise<JobDetail | undefined> {
    const id = parseBatchAppId(appId);
    if (id === undefined) return undefined;
    let nextToken: string | undefined;
    do {
      let page: ListJobsCommandOutput;
      try {
        page = await this.listJobsByName(id, nextToken);
      } catch (error) {
        // Batch answers an unknown queue with a ClientException: no such queue, so no such job.
        if (isClientException(error) && !isAccessDenied(error)) return undefined;
        throw toSchedulerError(error, { service: 'batch', action: 'ListJobs' });
      }
      const newest = (page.jobSummaryList ?? [])
        .filter((summary) => summary.jobName === id.jobName)
        .sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0))[0];
      if (newest?.jobId !== undefined) {
        const [job] = await this.describeJobs([newest.jobId]);
        if (job !== undefined) this.rememberJob(appId, job.jobId);
        return job;
      }
      nextToken = page.nextToken;
    } while (nextToken);
    return undefined;
  }

  private listJobsByName(id: BatchAppId, nextToken: string | undefined): Promise<ListJobsCommandOutput> {
    return this.batch.send(
      new ListJobsCommand({
        jobQueue: id.queue,
        filters: [{ name: 'JOB_NAME', values: [id.jobName] }],
        nextToken,
      }),
    );
  }

  /** DescribeJobs in calls of at most 100 ids. */
  private async describeJobs(ids: readonly string[]): Promise<JobDetail[]> {
    if (ids.length === 0) return [];
    const pages = await Promise.all(
      chunks(ids, DESCRIBE_JOBS_BATCH).map((jobs) =>
        this.call('DescribeJobs', () => this.batch.send(new DescribeJobsCommand({ jobs }))),
      ),
    );
    return pages.flatMap((page) => page.jobs ?? []);
  }

  /** The node jobs (`<jobId>#<n>`) of a started multi-node job, by node index. */
  private async describeNodes(job: JobDetail): Promise<Map<number, JobDetail>> {
    const numNodes = job.nodeProperties?.numNodes ?? 0;
    const nodes = new Map<number, JobDetail>();
    if (numNodes === 0 || !STARTED_STATUSES.has(job.status ?? '')) return nodes;
    const ids = Array.from({ length: numNodes }, (_, i) => `${job.jobId}#${i}`);
    for (const node of await this.describeJobs(ids)) {
      const index = nodeIndexOf(node);
      if (index !== undefined) nodes.set(index, node);
    }
    return nodes;
  }

  private async stopJob(job: JobDetail, reason: string): Promise<void> {
    const recorded = `${CANCEL_REASON_PREFIX}${reason}`.slice(0, MAX_CANCEL_REASON_LENGTH);
    const jobId = job.jobId ?? '';
    if (PRE_START_STATUSES.has(job.status ?? '')) {
      await this.call('CancelJob', () => this.batch.send(new CancelJobCommand({ jobId, reason: recorded })));
      // CancelJob does nothing to a job that started meanwhile; such a job must be terminated.
      const [now] = await this.describeJobs([jobId]);
      if (now === undefined || PRE_START_STATUSES.has(now.status ?? '') || isTerminal(batchStateOf(now)))
        return;
    }
    await this.call('TerminateJob', () =>
      this.batch.send(new TerminateJobCommand({ jobId, reason: recorded })),
    );
  }

  private async allQueues(): Promise<string[]> {
    const queues: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.call('DescribeJobQueues', () =>
        this.batch.send(new DescribeJobQueuesCommand({ nextToken })),
      );
      for (const queue of page.jobQueues ?? []) if (queue.jobQueueName) queues.push(queue.jobQueueName);
      nextToken = page.nextToken;
    } while (nextToken);
    return queues;
  }

  private async listQueue(queue: string, createdAfter: string): Promise<ListAppResponse[]> {
    const apps: ListAppResponse[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.call('ListJobs', () =>
        this.batch.send(
          new ListJobsCommand({
            jobQueue: queue,
            filters: [{ name: 'AFTER_CREATED_AT', values: [createdAfter] }],
            nextToken,
          }),
        ),
      );
      const jobs = await this.describeJobs(
        (page.jobSummaryList ?? []).flatMap((s) => (s.jobId ? [s.jobId] : [])),
      );
      for (const job of jobs) {
        const tags = job.tags ?? {};
        if (!Object.hasOwn(tags, TORCHX_VERSION_TAG)) continue;
        apps.push({
          appId: `${queueNameOf(queue) ?? queue}:${job.jobName}`,
          state: batchStateOf(job),
          appHandle: '<NOT_SET>',
          name: tags[TORCHX_APP_NAME_TAG] ?? job.jobName ?? '',
        });
      }
      nextToken = page.nextToken;
    } while (nextToken);
    return apps;
  }
}

/**
 * Builds the `aws_batch` scheduler. Clients default to shared ones built once per process.
 *
 * @example
 * ```ts
 * const registry = new SchedulerRegistry({
 *   aws_batch: (ctx) => createAwsBatchScheduler(ctx, { queues: ['gpu', 'cpu'] }),
 * });
 * ```
 */
export function createAwsBatchScheduler(
  context: SchedulerContext,
  options: AwsBatchSchedulerOptions = {},
): AwsBatchScheduler {
  return new AwsBatchScheduler(context, options);
}

/**
 * The app's reason, plus — for a FAILED multi-node job, whose parent carries no container — the status and
 * container reason of the first failed node, so status shows why (e.g. `CannotPullContainerError: …`).
 */
function failureMessage(
  state: AppState,
  reason: string | undefined,
  rolesStatuses: readonly RoleStatus[],
): string | undefined {
  if (state !== 'FAILED') return reason;
  const failed = rolesStatuses
    .flatMap((r) => r.replicas)
    .find((replica) => replica.state === 'FAILED' && replica.reason !== undefined && replica.reason !== '');
  if (failed?.reason === undefined || reason?.includes(failed.reason)) return reason;
  const node = `${failed.role}[${failed.id}]: ${failed.reason}`;
  return reason === undefined ? node : `${reason}; ${node}`;
}
