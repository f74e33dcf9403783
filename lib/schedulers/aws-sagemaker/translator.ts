/**
 * The pure half of the `aws_sagemaker` scheduler: run options, capabilities, validation and translation, with
 * no AWS SDK client. {@link AwsSageMakerScheduler} holds one and adds the SageMaker and CloudWatch Logs calls; the
 * dry-run and scheduler-listing functions register it alone, so their bundles carry no SDK client.
 *
 * @module
 */
import { userInfo } from 'node:os';
import {
  type AppDef,
  AppDryRunInfo,
  type Cfg,
  cloneAppDef,
  type JobWorkspace,
  type RunOpts,
  randomId,
} from '../../specs/index.js';
import type { SchedulerCapabilities, SchedulerContext } from '../scheduler.js';
import { TORCHX_VERSION_TAG_VALUE } from '../torchx-version.js';
import { TranslatingScheduler } from '../translating.js';
import { type AwsSageMakerOpts, sageMakerRunOpts } from './opts.js';
import { type AwsSageMakerRequest, type TranslateContext, translateApp } from './translate.js';
import { sageMakerArchiveOf } from './workspace.js';

/** The scheduler's registered name. */
export const AWS_SAGEMAKER = 'aws_sagemaker';

/** Value of the `torchx.pytorch.org/version` tag written on every job: the same as on Batch. */
export const TORCHX_SERVERLESS_VERSION = TORCHX_VERSION_TAG_VALUE;

/** As long as TorchX's longest random id (14 characters); used by `validate`. */
const LONGEST_ID = 'b'.repeat(14);

/** Options of the translation (and so of {@link AwsSageMakerTranslator} and the scheduler). */
export interface AwsSageMakerTranslatorOptions {
  /** Value of the `user` option when none is given; the OS user otherwise. */
  defaultUser?: string;
  /** Unique job-name suffix generator (TorchX's `random_id` by default); inject it for deterministic names. */
  uniqueId?: () => string;
  /** Value of the `torchx.pytorch.org/version` tag. */
  version?: string;
  /** Tags every training job gets after all others (a deployed stack's tag); none by default. */
  stackTags?: Readonly<Record<string, string>>;
  /** Instance types runs may use (403 `InstanceTypeNotAllowed` otherwise); any by default. */
  allowedInstanceTypes?: readonly string[];
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/**
 * `aws_sagemaker` for dry runs: the same translation, options and capabilities as the scheduler; submit,
 * describe, cancel and logs fail with a NotSupportedError (build the scheduler for those).
 *
 * @example
 * ```ts
 * const sageMaker = new AwsSageMakerTranslator({ sessionName: 'torchx' });
 * const info = sageMaker.submitDryrun(app, { role: 'arn:aws:iam::123456789012:role/sm', output_path: 's3://b/o' });
 * ```
 */
export class AwsSageMakerTranslator extends TranslatingScheduler<AwsSageMakerOpts, AwsSageMakerRequest> {
  private readonly defaultUser: string;
  private readonly uniqueId: () => string;
  private readonly version: string;
  private readonly stackTags: Readonly<Record<string, string>> | undefined;
  private readonly allowedInstanceTypes: readonly string[] | undefined;
  /** The run options, built on first use (they depend only on the default user). */
  private runOptions: RunOpts | undefined;

  constructor(context: SchedulerContext, options: AwsSageMakerTranslatorOptions = {}) {
    super(
      AWS_SAGEMAKER,
      context,
      'this instance only translates (a dry-run function); the aws_sagemaker scheduler submits',
    );
    this.defaultUser = options.defaultUser ?? osUser();
    this.uniqueId = options.uniqueId ?? randomId;
    this.version = options.version ?? TORCHX_SERVERLESS_VERSION;
    this.stackTags = options.stackTags;
    this.allowedInstanceTypes = options.allowedInstanceTypes;
  }

  override runOpts(): RunOpts {
    this.runOptions ??= sageMakerRunOpts(this.defaultUser);
    return this.runOptions;
  }

  override capabilities(): SchedulerCapabilities {
    return {
      cancel: true,
      logs: true,
      describe: 'partial',
      distributed: true,
      mounts: false,
      retries: true,
      elasticity: false,
    };
  }

  /**
   * Takes a workspace whose archive is in S3: SageMaker downloads it through an input channel with the job's
   * execution role. A path on the server's machine (the local server's archives) is refused.
   *
   * @throws ValidationError naming `workspace`.
   */
  override checkWorkspace(workspace: JobWorkspace): void {
    sageMakerArchiveOf(workspace);
  }

  /**
   * Checks everything SageMaker would reject (the base rules, then the full translation, with the lengths the
   * job name affects checked for the longest suffix).
   *
   * @throws ValidationError naming each field; AppNotSupportedError for several roles or mounts.
   */
  override validate(app: AppDef, cfg: Readonly<Cfg> = {}): void {
    super.validate(app, cfg);
    // Checks with the longest possible suffix, so that no unique id is used up and no real name can be longer.
    translateApp(app, this.runOpts().resolve(cfg) as AwsSageMakerOpts, this.translateContext(LONGEST_ID));
  }

  /**
   * The base checks, then one translation that makes {@link validate}'s checks itself (lengths for the
   * longest suffix), so the app is translated once per dry run or run. `cfg` is already resolved.
   */
  override validatedDryrun(
    app: AppDef,
    cfg: Readonly<Cfg>,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<AwsSageMakerRequest> {
    super.validate(app, cfg);
    return this.dryRunInfo(app, cfg as AwsSageMakerOpts, workspace, LONGEST_ID);
  }

  protected override translate(
    app: AppDef,
    cfg: AwsSageMakerOpts,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<AwsSageMakerRequest> {
    return this.dryRunInfo(app, cfg, workspace);
  }

  private dryRunInfo(
    app: AppDef,
    cfg: AwsSageMakerOpts,
    workspace: JobWorkspace | undefined,
    lengthsForId?: string,
  ): AppDryRunInfo<AwsSageMakerRequest> {
    const context = this.translateContext(this.uniqueId());
    if (lengthsForId !== undefined) context.lengthsForId = lengthsForId;
    const request = translateApp(app, cfg, context, workspace);
    return new AppDryRunInfo(this.backend, cloneAppDef(app), cfg, request);
  }

  private translateContext(uniqueId: string): TranslateContext {
    return {
      backend: this.backend,
      sessionName: this.sessionName,
      uniqueId,
      version: this.version,
      ...(this.stackTags === undefined ? {} : { stackTags: this.stackTags }),
      ...(this.allowedInstanceTypes === undefined ? {} : { allowedInstanceTypes: this.allowedInstanceTypes }),
    };
  }

  override appIdOf(dryrun: AppDryRunInfo<AwsSageMakerRequest>): string {
    return dryrun.request.createTrainingJob.TrainingJobName ?? '';
  }
}
