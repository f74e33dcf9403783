import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import {
  CreateTrainingJobCommand,
  DescribeTrainingJobCommand,
  type DescribeTrainingJobCommandOutput,
  ListTagsCommand,
  ListTrainingJobsCommand,
  type ListTrainingJobsCommandInput,
  SageMakerClient,
  StopTrainingJobCommand,
} from '@aws-sdk/client-sagemaker';
import {
  type AppDryRunInfo,
  type DescribeAppResponse,
  INSTANCE_TYPE_CAPABILITY,
  isNamedResource,
  isTerminal,
  type ListAppResponse,
  MISSING,
  makeAppHandle,
  makeDescribeAppResponse,
  makeResource,
  makeRole,
  NONE,
  namedResource,
  type Resource,
  type Role,
  retry,
  UnknownAppError,
  ValidationError,
} from '../../specs/index.js';
import { UnknownReplicaError, UnknownRoleError } from '../errors.js';
import type { LogPage, LogPageRequest } from '../logs.js';
import { type LogsClientSource, logsClientOf } from '../logs-client.js';
import type { SchedulerContext } from '../scheduler.js';
import { SubmittingScheduler } from '../submitting.js';
import { givenCommand } from '../workspace.js';
import type { AwsSageMakerOpts } from './opts.js';
import { isNotFoundError, isThrottlingError, sdkErrorName, toSchedulerError } from './sdk-errors.js';
import {
  DEFAULT_ROLE_NAME,
  sageMakerRoleNameOf,
  sageMakerRoleStatusesOf,
  sageMakerStateOf,
  sageMakerTransitionOf,
} from './state.js';
import { APP_NAME_TAG, type AwsSageMakerRequest, VERSION_TAG } from './translate.js';
import { AwsSageMakerTranslator, type AwsSageMakerTranslatorOptions } from './translator.js';

/** Default look-back of {@link AwsSageMakerScheduler.list}: 30 days. */
export const DEFAULT_LIST_LOOKBACK_MS = 30 * 24 * 3600 * 1000;

/**
 * Names made by this scheduler end with `-<id>` where the id is TorchX's random id (a consonant, then
 * consonants and digits without 8). `list` only asks for the tags of jobs whose names have this shape.
 */
const OUR_NAME_SHAPE = /-[bcdfghjklmnpqrstvwxz][bcdfghjklmnpqrstvwxz012345679]{0,13}$/;

/** Options of {@link createAwsSageMakerScheduler}: the translation's, and the clients, retries and listing. */
export interface AwsSageMakerSchedulerOptions extends AwsSageMakerTranslatorOptions {
  /** SageMaker client; a default client (standard retries, 5 attempts) is built once otherwise. */
  sageMakerClient?: SageMakerClient;
  /**
   * CloudWatch Logs client, or a function that builds it when a log is first read; a default client is
   * built then otherwise.
   */
  logsClient?: LogsClientSource;
  /** Extra attempts after a throttling error that survived the SDK's own retries (default 3). */
  throttleRetries?: number;
  /** Ceiling of the first back-off delay in ms, doubled each attempt up to 20 s, full jitter (default 500). */
  throttleBaseDelayMs?: number;
  /** How far back `list` looks for jobs, in ms (default 30 days). */
  listLookbackMs?: number;
}

/** Longest back-off between the throttling retries of {@link AwsSageMakerSchedulerOptions.throttleRetries}. */
const THROTTLE_BACKOFF_CAP_MS = 20_000;

let sharedSageMakerClient: SageMakerClient | undefined;

/** The process-wide default SageMaker client (built on first use). */
export function defaultSageMakerClient(): SageMakerClient {
  sharedSageMakerClient ??= new SageMakerClient({ maxAttempts: 5, retryMode: 'standard' });
  return sharedSageMakerClient;
}

type TrainingJob = DescribeTrainingJobCommandOutput;

/** A Resource for an ML instance type: the named AWS resource when there is one, else just the type. */
export function resourceForInstanceType(instanceType: string | undefined): Resource {
  const bare = (instanceType ?? '').replace(/^ml\./, '');
  if (bare !== '' && isNamedResource(`aws_${bare}`)) return namedResource(`aws_${bare}`);
  return makeResource({
    cpu: -1,
    gpu: -1,
    memMB: -1,
    capabilities: bare === '' ? {} : { [INSTANCE_TYPE_CAPABILITY]: bare },
  });
}

/** Rebuilds the role a training job runs (as far as SageMaker reports it). */
export function roleOfTrainingJob(job: TrainingJob, roleName: string): Role {
  const spec = job.AlgorithmSpecification;
  // A job in a workspace runs the role's command behind the unpacking wrapper: shown as the role was given.
  const command = givenCommand([...(spec?.ContainerEntrypoint ?? []), ...(spec?.ContainerArguments ?? [])]);
  return makeRole({
    name: roleName,
    image: spec?.TrainingImage ?? '',
    entrypoint: command[0] ?? MISSING,
    args: command.slice(1),
    env: { ...(job.Environment ?? {}) },
    numReplicas: job.ResourceConfig?.InstanceCount ?? 1,
    maxRetries: job.RetryStrategy?.MaximumRetryAttempts ?? 0,
    resource: resourceForInstanceType(job.ResourceConfig?.InstanceType),
  });
}

/**
 * Runs AppDefs as Amazon SageMaker training jobs. See docs/schedulers/aws-sagemaker.md for the mapping.
 *
 * @example
 * ```ts
 * const scheduler = createAwsSageMakerScheduler({ sessionName: 'torchx' });
 * const info = scheduler.submitDryrun(app, {
 *   role: 'arn:aws:iam::123456789012:role/SageMakerExecution',
 *   output_path: 's3://my-bucket/torchx/',
 * });
 * const appId = await scheduler.schedule(info); // the training job name
 * ```
 */
export class AwsSageMakerScheduler extends SubmittingScheduler<AwsSageMakerOpts, AwsSageMakerRequest> {
  private readonly sageMaker: SageMakerClient;
  /** The Logs client, built (and its code imported) when a log is first read. */
  private readonly logs: () => Promise<CloudWatchLogsClient>;
  private readonly throttleRetries: number;
  private readonly throttleBaseDelayMs: number;
  private readonly listLookbackMs: number;
  /** Tags of jobs already looked at by `list` (undefined: not ours); names are never reused. */
  private readonly tagCache = new Map<string, Record<string, string> | undefined>();

  constructor(context: SchedulerContext, options: AwsSageMakerSchedulerOptions = {}) {
    super(new AwsSageMakerTranslator(context, options), context);
    this.sageMaker = options.sageMakerClient ?? defaultSageMakerClient();
    this.logs = logsClientOf(options.logsClient, 'standard');
    this.throttleRetries = options.throttleRetries ?? 3;
    this.throttleBaseDelayMs = options.throttleBaseDelayMs ?? 500;
    this.listLookbackMs = options.listLookbackMs ?? DEFAULT_LIST_LOOKBACK_MS;
  }

  /**
   * Creates the training job. If SageMaker says the name is taken but the existing job is this very
   * request (an earlier attempt whose answer was lost), the job is reported as scheduled.
   */
  override async schedule(dryrun: AppDryRunInfo<AwsSageMakerRequest>): Promise<string> {
    const input = dryrun.request.createTrainingJob;
    const name = this.appIdOf(dryrun);
    try {
      await this.retrying(() => this.sageMaker.send(new CreateTrainingJobCommand(input)));
      return name;
    } catch (error) {
      if (sdkErrorName(error) === 'ResourceInUse') {
        const existing = await this.describeTrainingJob(name).catch(() => undefined);
        if (existing !== undefined && sameEnvironment(existing.Environment, input.Environment)) return name;
      }
      throw toSchedulerError(error, 'sagemaker:CreateTrainingJob', `training job ${name}`);
    }
  }

  override async describe(appId: string): Promise<DescribeAppResponse | undefined> {
    const job = await this.describeTrainingJob(appId);
    if (job === undefined) return undefined;
    const transition = sageMakerTransitionOf(job, 'describe');
    const roleName = sageMakerRoleNameOf(job) ?? DEFAULT_ROLE_NAME;
    const metadata: Record<string, string> = {};
    if (job.TrainingJobArn !== undefined) metadata.trainingJobArn = job.TrainingJobArn;
    if (job.TrainingJobStatus !== undefined) metadata.trainingJobStatus = job.TrainingJobStatus;
    if (job.SecondaryStatus !== undefined) metadata.secondaryStatus = job.SecondaryStatus;
    const response = makeDescribeAppResponse({
      appId,
      state: transition.state,
      numRestarts: transition.numRestarts ?? 0,
      msg: transition.reason ?? NONE,
      metadata,
      rolesStatuses: sageMakerRoleStatusesOf(job, transition.state, roleName) ?? [],
      roles: [roleOfTrainingJob(job, roleName)],
      updatedAt: transition.eventTime,
    });
    if (transition.uiUrl !== undefined) response.uiUrl = transition.uiUrl;
    if (transition.stateReason !== undefined) response.stateReason = transition.stateReason;
    return response;
  }

  /**
   * Lists the training jobs this project launched in the look-back window, newest first.
   * ListTrainingJobs cannot filter by tag, so jobs whose names have this scheduler's shape
   * (`<name>-<random id>`) are checked with ListTags for the `torchx.pytorch.org/version` tag; answers are
   * cached for the scheduler's lifetime. StatusEquals is not used: with MaxResults it filters after
   * paging and returns short or empty pages.
   */
  override async list(): Promise<ListAppResponse[]> {
    const apps: ListAppResponse[] = [];
    let nextToken: string | undefined;
    do {
      const input: ListTrainingJobsCommandInput = {
        MaxResults: 100,
        SortBy: 'CreationTime',
        SortOrder: 'Descending',
        CreationTimeAfter: new Date(this.now() - this.listLookbackMs),
      };
      if (nextToken !== undefined) input.NextToken = nextToken;
      const page = await this.callSageMaker('sagemaker:ListTrainingJobs', 'training jobs', () =>
        this.sageMaker.send(new ListTrainingJobsCommand(input)),
      );
      for (const summary of page.TrainingJobSummaries ?? []) {
        const name = summary.TrainingJobName;
        if (name === undefined || !OUR_NAME_SHAPE.test(name) || summary.TrainingJobArn === undefined)
          continue;
        const tags = await this.tagsOf(name, summary.TrainingJobArn);
        if (tags === undefined) continue;
        apps.push({
          appId: name,
          state: sageMakerStateOf(summary.TrainingJobStatus, summary.SecondaryStatus),
          appHandle: '<NOT_SET>',
          name: tags[APP_NAME_TAG] ?? name,
        });
      }
      nextToken = page.NextToken;
    } while (nextToken !== undefined);
    return apps;
  }

  /** Stops the job (SIGTERM, then SIGKILL after 120 s). A job that is already stopping or done is left alone. */
  protected override async cancelExisting(appId: string, _reason: string): Promise<void> {
    try {
      await this.retrying(() => this.sageMaker.send(new StopTrainingJobCommand({ TrainingJobName: appId })));
    } catch (error) {
      if (isNotFoundError(error)) return;
      if (sdkErrorName(error) === 'ValidationException') {
        const job = await this.describeTrainingJob(appId);
        if (job === undefined || job.TrainingJobStatus !== 'InProgress') return;
      }
      throw toSchedulerError(error, 'sagemaker:StopTrainingJob', `training job ${appId}`);
    }
  }

  /**
   * Deleting a SageMaker app stops it: there is no job definition to remove, and DeleteTrainingJob is not
   * called because it erases the metadata that describe and logs read (and only works on finished jobs).
   */
  protected override async deleteExisting(appId: string): Promise<void> {
    await this.cancel(appId, 'deleted via torchx-serverless');
  }

  protected override async fetchLogPage(appId: string, request: LogPageRequest): Promise<LogPage> {
    if (request.streams !== undefined && request.streams !== 'combined') {
      throw ValidationError.forField(
        'streams',
        'SageMaker writes stdout and stderr to one CloudWatch stream per instance; use streams=combined',
      );
    }
    const job = await this.describeTrainingJob(appId);
    if (job === undefined) throw new UnknownAppError(makeAppHandle(this.backend, this.sessionName, appId));
    const roleName = sageMakerRoleNameOf(job) ?? DEFAULT_ROLE_NAME;
    if (request.role !== roleName) throw new UnknownRoleError(request.role, [roleName]);
    const replica = request.replica ?? 0;
    const count = job.ResourceConfig?.InstanceCount ?? 1;
    if (!Number.isInteger(replica) || replica < 0 || replica >= count) {
      throw new UnknownReplicaError(roleName, replica, count);
    }
    const state = sageMakerStateOf(
      job.TrainingJobStatus,
      job.SecondaryStatus,
      job.SecondaryStatusTransitions,
    );
    const pastUntil = request.until !== undefined && request.until.getTime() <= this.now();
    const [{ readSageMakerLogPage }, logsClient] = await Promise.all([
      import('./log-reader.js'),
      this.logs(),
    ]);
    return readSageMakerLogPage({
      logsClient,
      call: (action, send) => this.callOrUndefined(action, `the logs of training job ${appId}`, send),
      jobName: appId,
      replica,
      finished: isTerminal(state) || pastUntil,
      request,
    });
  }

  /** DescribeTrainingJob; undefined for an unknown job. */
  private async describeTrainingJob(name: string): Promise<TrainingJob | undefined> {
    return this.callOrUndefined('sagemaker:DescribeTrainingJob', `training job ${name}`, () =>
      this.sageMaker.send(new DescribeTrainingJobCommand({ TrainingJobName: name })),
    );
  }

  /** The job's tags when it carries the version tag (ours), else undefined; cached. */
  private async tagsOf(name: string, arn: string): Promise<Record<string, string> | undefined> {
    if (this.tagCache.has(name)) return this.tagCache.get(name);
    const answer = await this.callOrUndefined('sagemaker:ListTags', `training job ${name}`, () =>
      this.sageMaker.send(new ListTagsCommand({ ResourceArn: arn, MaxResults: 100 })),
    );
    const tags = Object.fromEntries((answer?.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
    const ours = Object.hasOwn(tags, VERSION_TAG) ? tags : undefined;
    this.tagCache.set(name, ours);
    return ours;
  }

  /** Sends with throttling retries; errors become scheduler errors. */
  private async callSageMaker<T>(action: string, target: string, send: () => Promise<T>): Promise<T> {
    try {
      return await this.retrying(send);
    } catch (error) {
      throw toSchedulerError(error, action, target);
    }
  }

  /** Like {@link callSageMaker} but resolves to undefined when the resource does not exist. */
  private async callOrUndefined<T>(
    action: string,
    target: string,
    send: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await this.retrying(send);
    } catch (error) {
      if (isNotFoundError(error)) return undefined;
      throw toSchedulerError(error, action, target);
    }
  }

  /**
   * Retries throttling errors that survived the SDK's own retries, with exponential back-off and full
   * jitter through the injectable `sleep`.
   */
  private retrying<T>(send: () => Promise<T>): Promise<T> {
    return retry(send, {
      maxAttempts: this.throttleRetries + 1,
      isRetryable: isThrottlingError,
      baseMs: this.throttleBaseDelayMs,
      capMs: THROTTLE_BACKOFF_CAP_MS,
      sleep: this.sleep,
    });
  }
}

function sameEnvironment(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const left = Object.entries(a ?? {}).sort(([x], [y]) => x.localeCompare(y));
  const right = Object.entries(b ?? {}).sort(([x], [y]) => x.localeCompare(y));
  return JSON.stringify(left) === JSON.stringify(right);
}

/**
 * Builds the `aws_sagemaker` scheduler.
 *
 * @example
 * ```ts
 * const registry = new SchedulerRegistry({
 *   aws_sagemaker: (ctx) => createAwsSageMakerScheduler(ctx, { sageMakerClient, logsClient }),
 * });
 * ```
 */
export function createAwsSageMakerScheduler(
  context: SchedulerContext,
  options: AwsSageMakerSchedulerOptions = {},
): AwsSageMakerScheduler {
  return new AwsSageMakerScheduler(context, options);
}
