/**
 * The pure half of the `aws_batch` scheduler: run options, capabilities, validation and translation, with no
 * AWS SDK client. {@link AwsBatchScheduler} holds one and adds the Batch and CloudWatch Logs calls; the
 * dry-run and scheduler-listing functions register it alone, so they load no SDK.
 *
 * @module
 */
import { type AppDef, AppDryRunInfo, type Cfg, type JobWorkspace, type RunOpts } from '../../specs/index.js';
import type { SchedulerCapabilities, SchedulerContext } from '../scheduler.js';
import { TranslatingScheduler } from '../translating.js';
import { DEFAULT_WORKSPACE_FETCH_IMAGE } from '../workspace.js';
import { parseBatchAppId } from './app-id.js';
import { type AwsBatchOpts, awsBatchRunOpts, osUserName, queueNameOf } from './options.js';
import {
  type AwsBatchRequest,
  defaultUniqueNamer,
  MAX_UNIQUE_SUFFIX_LENGTH,
  translateApp,
  type UniqueNamer,
} from './translate.js';
import { batchWorkspaceOf } from './workspace.js';

/** The registered name of this scheduler. */
export const AWS_BATCH_SCHEDULER = 'aws_batch';

/** Options of the translation (and so of {@link AwsBatchTranslator} and the scheduler). */
export interface AwsBatchTranslatorOptions {
  /** Default of the `user` run option (the caller); the OS user when omitted. */
  defaultUser?: string;
  /** Makes the unique job name from its prefix (TorchX `make_unique`); inject a fixed one in tests. */
  uniqueNamer?: UniqueNamer;
  /** Tags every job definition and job gets after all others (a deployed stack's tag); none by default. */
  stackTags?: Readonly<Record<string, string>>;
  /**
   * Starts every job and job definition name (a deployed stack's `batchNamePrefix`, which its IAM policy
   * names); none by default.
   */
  namePrefix?: string;
  /**
   * Image of the container that fetches a workspace archive from S3 before the role's container starts: an
   * AWS CLI image (its entrypoint `aws`); {@link DEFAULT_WORKSPACE_FETCH_IMAGE} by default. A deployment
   * whose compute environments cannot reach the public ECR gallery names a copy in its own registry.
   */
  workspaceFetchImage?: string;
}

/**
 * `aws_batch` for dry runs: the same translation, options and capabilities as the scheduler; submit,
 * describe, cancel and logs fail with a NotSupportedError (build the scheduler for those).
 *
 * @example
 * ```ts
 * const batch = new AwsBatchTranslator({ sessionName: 'torchx' });
 * const info = batch.submitDryrun(app, { queue: 'gpu' }); // info.request is the exact SDK input
 * ```
 */
export class AwsBatchTranslator extends TranslatingScheduler<AwsBatchOpts, AwsBatchRequest> {
  private readonly defaultUser: string | undefined;
  private readonly uniqueNamer: UniqueNamer;
  private readonly stackTags: Readonly<Record<string, string>>;
  private readonly namePrefix: string;
  private readonly workspaceFetchImage: string;
  /** The run options, built on first use (they depend only on the default user). */
  private runOptions: RunOpts | undefined;

  constructor(context: SchedulerContext, options: AwsBatchTranslatorOptions = {}) {
    super(
      AWS_BATCH_SCHEDULER,
      context,
      'this instance only translates (a dry-run function); the aws_batch scheduler submits',
    );
    this.defaultUser = options.defaultUser;
    this.uniqueNamer = options.uniqueNamer ?? defaultUniqueNamer;
    this.stackTags = { ...(options.stackTags ?? {}) };
    this.namePrefix = options.namePrefix ?? '';
    this.workspaceFetchImage = options.workspaceFetchImage ?? DEFAULT_WORKSPACE_FETCH_IMAGE;
  }

  /** The run options; `user` defaults to the configured default user, else the OS user. */
  runOpts(): RunOpts {
    this.runOptions ??= awsBatchRunOpts(this.defaultUser ?? osUserName());
    return this.runOptions;
  }

  /** cancel, logs, full describe, distributed, mounts and retries; no elasticity. */
  override capabilities(): SchedulerCapabilities {
    return {
      cancel: true,
      logs: true,
      describe: 'full',
      distributed: true,
      mounts: true,
      retries: true,
      elasticity: false,
    };
  }

  protected translate(
    app: AppDef,
    cfg: AwsBatchOpts,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<AwsBatchRequest> {
    return this.translateChecked(app, cfg, false, workspace);
  }

  /** {@link translate}, with the size quotas checked for the longest unique name when `worstCaseSizes`. */
  private translateChecked(
    app: AppDef,
    cfg: AwsBatchOpts,
    worstCaseSizes: boolean,
    workspace: JobWorkspace | undefined,
  ): AppDryRunInfo<AwsBatchRequest> {
    const { request, app: submitted } = translateApp(
      app,
      cfg,
      this.uniqueNamer,
      this.stackTags,
      worstCaseSizes,
      this.namePrefix,
      workspace === undefined ? undefined : batchWorkspaceOf(workspace, this.workspaceFetchImage),
    );
    return new AppDryRunInfo(AWS_BATCH_SCHEDULER, submitted, { ...cfg }, request);
  }

  /**
   * Takes a workspace whose archive is in S3 (a deployed stack's workspace bucket): the job fetches it with
   * its job role. A path on the server's machine (the local server's archives) is refused.
   *
   * @throws ValidationError naming `workspace`.
   */
  override checkWorkspace(workspace: JobWorkspace): void {
    batchWorkspaceOf(workspace, this.workspaceFetchImage);
  }

  /**
   * Checks the app against AWS Batch's rules and the Batch quotas before anything is sent (the same checks
   * `submitDryrun` makes, with the longest possible job name for the size quotas).
   *
   * @throws InvalidRunConfigError for a missing or mistyped option; ValidationError naming each field.
   */
  override validate(app: AppDef, cfg: Readonly<Cfg> = {}): void {
    super.validate(app, cfg);
    const resolved = this.runOpts().resolve(cfg) as AwsBatchOpts;
    translateApp(
      app,
      resolved,
      (prefix) => `${prefix}-${'x'.repeat(MAX_UNIQUE_SUFFIX_LENGTH - 1)}`,
      this.stackTags,
      false,
      this.namePrefix,
    );
  }

  /**
   * The base checks, then one translation that makes {@link validate}'s checks itself (the size quotas for the
   * longest unique name), so the app is translated once per dry run or run.
   */
  override validatedDryrun(
    app: AppDef,
    cfg: Readonly<Cfg>,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<AwsBatchRequest> {
    super.validate(app, cfg);
    return this.translateChecked(app, cfg as AwsBatchOpts, true, workspace);
  }

  /**
   * `<queue name>:<job name>`, as TorchX, except that a queue given as an ARN contributes only its name: app
   * ids hold no `/`, so one app has one handle (`aws_batch://torchx/gpu:train-k3x9`).
   */
  override appIdOf(dryrun: AppDryRunInfo<AwsBatchRequest>): string {
    const { jobQueue, jobName } = dryrun.request.submitJob;
    return `${queueNameOf(jobQueue ?? '') ?? jobQueue}:${jobName}`;
  }

  /** The Batch job name: the part after the last `:` of the app id. */
  override nativeNameOf(appId: string): string {
    return parseBatchAppId(appId)?.jobName ?? appId;
  }
}
