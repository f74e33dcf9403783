/**
 * The result of a dry run: the exact native request a scheduler would send, plus the resolved app and cfg.
 *
 * @module
 */
import type { AppDef } from './app-def.js';
import type { Cfg } from './run-opts.js';

/** JSON form of a dry run, as `POST /v1/dryrun` returns it. */
export interface DryRunData<Request> {
  scheduler: string;
  app: AppDef;
  cfg: Cfg;
  request: Request;
}

/** The default rendering of a request: indented JSON. */
const prettyJson = (request: unknown): string => JSON.stringify(request, null, 2);

/**
 * What a scheduler would submit (TorchX `AppDryRunInfo`). `request` is the native request, byte for byte;
 * `format()` renders it for humans.
 *
 * @example
 * ```ts
 * const info = scheduler.submitDryrun(app, { queue: 'gpu' });
 * console.log(info.format());
 * ```
 */
export class AppDryRunInfo<Request = unknown> {
  constructor(
    /** Name of the scheduler that produced the request. */
    readonly scheduler: string,
    /** The app after defaults and scheduler-side changes, as submitted. */
    readonly app: AppDef,
    /** The resolved run options (defaults filled, aliases renamed). */
    readonly cfg: Cfg,
    /** The native request. */
    readonly request: Request,
    formatter: (request: Request) => string = prettyJson,
  ) {
    this.renderer = { render: formatter };
  }

  /**
   * Kept behind a method signature so that `AppDryRunInfo<SpecificRequest>` stays assignable to
   * `AppDryRunInfo<unknown>` (a function-typed field would make `Request` invariant, and no concrete
   * scheduler would fit the registry's `Scheduler` type).
   */
  private readonly renderer: { render(request: Request): string };

  /** Human-readable rendering of the request. */
  format(): string {
    return this.renderer.render(this.request);
  }

  /** Same as {@link format}. */
  toString(): string {
    return this.format();
  }

  /** `{scheduler, app, cfg, request}`. */
  toJSON(): DryRunData<Request> {
    return { scheduler: this.scheduler, app: this.app, cfg: this.cfg, request: this.request };
  }
}
