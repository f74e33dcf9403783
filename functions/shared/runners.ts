/**
 * The Planner (dry runs, scheduler descriptions) and the full Runner, built on the container's store and
 * clients on first use, once per cold start. Each scheduler's module is loaded by a dynamic `import()` when a
 * request names it (`backends/index.ts`): the function bundles are built with esbuild code splitting, so such a
 * module and its SDK clients are a chunk that a cold start does not load until then.
 * - {@link planner}: each scheduler's translation only (aws_batch and aws_sagemaker without SDK clients, no
 *   DynamoDB): the dry-run and scheduler-listing functions.
 * - {@link runner}: the full schedulers over the record store: run, status with refresh, cancel, delete,
 *   logs, the reconciler.
 */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { localStateChangeEvent } from '../../lib/events/index.js';
import { Planner, type PlannerOptions, Runner } from '../../lib/runner/index.js';
import { type SchedulerFactory, SchedulerRegistry } from '../../lib/schedulers/registry.js';
import type { BackendDeps } from './backends/deps.js';
import { BACKENDS, type BackendLoaders } from './backends/index.js';
import type { KnownScheduler } from './config.js';
import {
  builtOutbox,
  config,
  created,
  forgetAll,
  localModeHooks,
  onForget,
  runnerStore,
  sessionName,
} from './container.js';
import { deploymentConfig, HOST_ACCESS_SETTINGS } from './deployment-config.js';

/** A registry of every enabled scheduler whose factories are loaded on demand (see {@link load}). */
interface LazyRegistry {
  readonly registry: SchedulerRegistry;
  /** The factories loaded so far, by scheduler name. */
  readonly factories: Map<string, SchedulerFactory>;
  /** Which of a scheduler's two forms this registry loads. */
  readonly form: keyof BackendLoaders;
}

let builtDeps: BackendDeps | undefined;
let builtRunner: { runner: Runner; schedulers: LazyRegistry } | undefined;
let builtPlanner: { planner: Planner; schedulers: LazyRegistry } | undefined;

onForget(() => {
  builtDeps = undefined;
  builtRunner = undefined;
  builtPlanner = undefined;
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
 * factories exist once {@link load} has imported their modules.
 */
function lazyRegistry(form: keyof BackendLoaders): LazyRegistry {
  const factories = new Map<string, SchedulerFactory>();
  const entries: Record<string, SchedulerFactory> = {};
  for (const name of config().schedulers) {
    entries[name] = (ctx) => {
      const factory = factories.get(name);
      if (factory === undefined) throw new Error(`scheduler ${name} was used before its module was loaded`);
      return factory(ctx);
    };
  }
  return { registry: new SchedulerRegistry(entries, { sessionName: sessionName() }), factories, form };
}

/**
 * Imports the module of `scheduler` into `lazy` (of every enabled scheduler when undefined), once each. A
 * name that is not enabled is left to the registry, which refuses it with the enabled names.
 */
async function load(lazy: LazyRegistry, scheduler: string | undefined): Promise<void> {
  const enabled = config().schedulers;
  const wanted = scheduler === undefined ? enabled : enabled.filter((name) => name === scheduler);
  await Promise.all(
    wanted
      .filter((name) => !lazy.factories.has(name))
      .map(async (name) => {
        // The config admits only KNOWN_SCHEDULERS, each of which has loaders (the Record's type).
        const factory = await BACKENDS[name as KnownScheduler][lazy.form]();
        lazy.factories.set(name, factory(backendDeps()));
      }),
  );
}

/** What the Planner and the Runner share: the lazy registry, the session and the deployment's host access. */
function plannerOptions(schedulers: LazyRegistry): PlannerOptions {
  return {
    schedulers: schedulers.registry,
    sessionName: sessionName(),
    hostAccess: deploymentConfig().hostAccess,
    hostAccessSettings: HOST_ACCESS_SETTINGS,
  };
}

/**
 * The full Runner of this process, built on first use, with the modules of `scheduler` loaded (of every
 * enabled scheduler when omitted). Scheduler SDK clients are created when a request first uses their
 * scheduler.
 */
export async function runner(scheduler?: string): Promise<Runner> {
  if (builtRunner === undefined) {
    const schedulers = lazyRegistry('scheduler');
    builtRunner = { runner: new Runner({ ...plannerOptions(schedulers), store: runnerStore() }), schedulers };
  }
  const built = builtRunner;
  await load(built.schedulers, scheduler);
  return built.runner;
}

/**
 * The Planner of this process (dry runs, scheduler descriptions), built on first use over each scheduler's
 * translation, with that of `scheduler` loaded (of every enabled scheduler when omitted).
 */
export async function planner(scheduler?: string): Promise<Planner> {
  if (builtPlanner === undefined) {
    const schedulers = lazyRegistry('translator');
    builtPlanner = { planner: new Planner(plannerOptions(schedulers)), schedulers };
  }
  const built = builtPlanner;
  await load(built.schedulers, scheduler);
  return built.planner;
}

/**
 * Local mode, before the server accepts requests: local_cwd settles the apps a previous server left running
 * (exit codes recorded meanwhile) and adopts the replicas still alive; their state changes go through the
 * in-process bus like any other. Returns the app ids it touched; none when local_cwd is not enabled.
 */
export async function recoverLocalApps(): Promise<string[]> {
  const { LOCAL_CWD, recoverLocalCwd } = await import('./backends/local-cwd.js');
  if (!config().schedulers.includes(LOCAL_CWD)) return [];
  return recoverLocalCwd((await runner(LOCAL_CWD)).scheduler(LOCAL_CWD));
}

/**
 * Closes the schedulers (local mode shutdown), publishes what the local outbox holds, and forgets the
 * clients and Runners.
 */
export async function closeRunner(): Promise<void> {
  const built = [builtRunner?.runner, builtPlanner?.planner];
  const outbox = builtOutbox();
  forgetAll();
  await Promise.all(built.map((b) => b?.close()));
  await outbox?.drain?.();
}
