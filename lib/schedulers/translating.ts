/**
 * Base of the schedulers that translate and reach no backend unless a subclass provides the calls: `lsf`,
 * `kubernetes` and `kubernetes_mcad` without a cluster, `local_docker` without a Docker daemon, and the AWS
 * translators the dry-run functions use. The translation is TorchX's, byte for byte; every call that would
 * reach the backend fails with a {@link NotSupportedError} that says why and what to use instead.
 *
 * @module
 */
import type { AppDryRunInfo, Cfg, DescribeAppResponse, ListAppResponse } from '../specs/index.js';
import { NotSupportedError } from './errors.js';
import { Scheduler, type SchedulerCapabilities, type SchedulerContext } from './scheduler.js';

/**
 * A scheduler whose dry runs are complete and whose submission is not available. `run` fails before anything
 * is recorded ({@link appIdOf} throws, and the runner asks for the id before it writes a record); `describe`,
 * `cancel` and `logs` fail with the same explanation; `list` is empty (nothing was ever launched).
 */
export abstract class TranslatingScheduler<Opts extends Cfg, Request> extends Scheduler<Opts, Request> {
  constructor(
    backend: string,
    context: SchedulerContext,
    /** Why submitting is not available and what to do instead; ends every error message. */
    private readonly whyNot: string,
  ) {
    super(backend, context);
  }

  /** The error every backend call fails with. */
  protected notSupported(action: string): NotSupportedError {
    return new NotSupportedError(
      `${this.backend} supports dry runs only in torchx-serverless (${action} is not available): ${this.whyNot}`,
    );
  }

  /** Without a backend, nothing is cancelled, no log is read, and describe has the request alone. */
  capabilities(): SchedulerCapabilities {
    return {
      cancel: false,
      logs: false,
      describe: 'partial',
      distributed: true,
      mounts: true,
      retries: false,
      elasticity: false,
    };
  }

  /** @throws NotSupportedError: nothing can be submitted, so no app id is ever assigned. */
  appIdOf(_dryrun: AppDryRunInfo<Request>): string {
    throw this.notSupported('run');
  }

  /** @throws NotSupportedError */
  async schedule(_dryrun: AppDryRunInfo<Request>): Promise<string> {
    throw this.notSupported('run');
  }

  /** @throws NotSupportedError */
  async describe(_appId: string): Promise<DescribeAppResponse | undefined> {
    throw this.notSupported('describe');
  }

  /** Nothing was ever launched through this scheduler. */
  async list(): Promise<ListAppResponse[]> {
    return [];
  }

  /** @throws NotSupportedError */
  protected async cancelExisting(_appId: string, _reason: string): Promise<void> {
    throw this.notSupported('cancel');
  }
}
