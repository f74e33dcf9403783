/**
 * What the Planner and the Runner wiring share: a scheduler registry that lists every enabled scheduler and
 * loads each one's module (for the SDK-free schedulers a chunk of the function bundle) the first time a
 * request names it, and the dependencies those modules' factories get.
 */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { localStateChangeEvent } from '../../lib/events/index.js';
import type { PlannerOptions } from '../../lib/runner/index.js';
import { type SchedulerFactory, SchedulerRegistry } from '../../lib/schedulers/registry.js';
import type { BackendDeps, BackendFactory } from './backends/deps.js';
import type { KnownScheduler } from './config.js';
import { config, created, localModeHooks, onForget, sessionName } from './container.js';
import { deploymentConfig, HOST_ACCESS_SETTINGS } from './deployment-config.js';

/** How to load each known scheduler's module (`backends/schedulers.ts` or `backends/translators.ts`). */
export type SchedulerModules = Readonly<Record<KnownScheduler, () => Promise<BackendFactory>>>;

/** A registry of every enabled scheduler whose factories are loaded on demand (see {@link loadSchedulers}). */
export interface LazyRegistry {
  readonly registry: SchedulerRegistry;
  /** The factories loaded so far, by scheduler name. */
  readonly factories: Map<string, SchedulerFactory>;
  readonly modules: SchedulerModules;
}

let builtDeps: BackendDeps | undefined;
onForget(() => {
  builtDeps = undefined;
});

/** What a backend module's factory is given: built once per cold start, shared by every scheduler. */
function backendDeps(): BackendDeps {
  if (builtDeps) return builtDeps;
  let logsClient: CloudWatchLogsClient | undefined;
  builtDeps = {
    created,
    logsClient: (make) => {
      logsClient ??= created(make());
      return logsClient;
    },
    config: config(),
    deployment: deploymentConfig(),
    emitLocalTransition: async (appId, transition) => {
      await localModeHooks().emitEvent?.(localStateChangeEvent(appId, transition));
    },
  };
  return builtDeps;
}

/**
 * A registry listing every enabled scheduler (so an unknown name is refused with the full list), whose
 * factories exist once {@link loadSchedulers} has imported their modules.
 */
export function lazyRegistry(modules: SchedulerModules): LazyRegistry {
  const factories = new Map<string, SchedulerFactory>();
  const entries: Record<string, SchedulerFactory> = {};
  for (const name of config().schedulers) {
    entries[name] = (ctx) => {
      const factory = factories.get(name);
      if (factory === undefined) throw new Error(`scheduler ${name} was used before its module was loaded`);
      return factory(ctx);
    };
  }
  return { registry: new SchedulerRegistry(entries, { sessionName: sessionName() }), factories, modules };
}

/**
 * Imports the module of `scheduler` into `lazy` (of every enabled scheduler when undefined), once each. A
 * name that is not enabled is left to the registry, which refuses it with the enabled names.
 */
export async function loadSchedulers(lazy: LazyRegistry, scheduler: string | undefined): Promise<void> {
  const enabled = config().schedulers;
  const wanted = scheduler === undefined ? enabled : enabled.filter((name) => name === scheduler);
  await Promise.all(
    wanted
      .filter((name) => !lazy.factories.has(name))
      .map(async (name) => {
        // The config admits only KNOWN_SCHEDULERS, each of which has a module (the Record's type).
        const factory = await lazy.modules[name as KnownScheduler]();
        lazy.factories.set(name, factory(backendDeps()));
      }),
  );
}

/** What the Planner and the Runner share: the lazy registry, the session and the deployment's host access. */
export function plannerOptions(lazy: LazyRegistry): PlannerOptions {
  return {
    schedulers: lazy.registry,
    sessionName: sessionName(),
    hostAccess: deploymentConfig().hostAccess,
    hostAccessSettings: HOST_ACCESS_SETTINGS,
  };
}
