/**
 * The registry of scheduler factories: name → factory. The runner asks it for schedulers by name.
 *
 * @module
 */
import { type RunOptDescription, UnknownSchedulerError } from '../specs/index.js';
import type { Scheduler, SchedulerCapabilities, SchedulerContext } from './scheduler.js';

/** One scheduler as `GET /v1/schedulers` shows it. */
export interface SchedulerDescription {
  name: string;
  capabilities: SchedulerCapabilities;
  runOpts: RunOptDescription[];
}

/** Builds a scheduler for a session. */
export type SchedulerFactory = (context: SchedulerContext) => Scheduler;

/**
 * Named scheduler factories; creates each scheduler once and reuses it.
 *
 * @example
 * ```ts
 * const registry = new SchedulerRegistry({ local_cwd: (ctx) => new LocalCwdScheduler(ctx) });
 * registry.get('local_cwd');
 * registry.get('slurm'); // throws UnknownSchedulerError listing local_cwd
 * ```
 */
export class SchedulerRegistry {
  private readonly instances = new Map<string, Scheduler>();

  constructor(
    private readonly factories: Readonly<Record<string, SchedulerFactory>>,
    private readonly context: SchedulerContext = { sessionName: 'torchx' },
  ) {}

  /** Registered scheduler names, in registration order. */
  names(): string[] {
    return Object.keys(this.factories);
  }

  /** True when `name` is registered. */
  has(name: string): boolean {
    return Object.hasOwn(this.factories, name);
  }

  /**
   * The scheduler named `name`, created on first use.
   *
   * @throws UnknownSchedulerError listing the registered names.
   */
  get(name: string): Scheduler {
    const existing = this.instances.get(name);
    if (existing) return existing;
    if (!this.has(name)) throw new UnknownSchedulerError(name, this.names());
    const factory = this.factories[name] as SchedulerFactory;
    const scheduler = factory(this.context);
    this.instances.set(name, scheduler);
    return scheduler;
  }

  /** Every registered scheduler with its capabilities and run options, in registration order. */
  describe(): SchedulerDescription[] {
    return this.names().map((name) => {
      const s = this.get(name);
      return { name, capabilities: s.capabilities(), runOpts: s.runOpts().describe() };
    });
  }

  /** Closes every created scheduler. */
  async close(): Promise<void> {
    await Promise.all([...this.instances.values()].map((s) => s.close()));
  }
}
