/**
 * The scheduler table: each known scheduler's name → its module, imported the first time a request names it
 * (as TorchX's `DEFAULT_SCHEDULER_MODULES`), except the deployment's default schedulers (aws_batch,
 * aws_sagemaker), which come with the table: every file a cold start loads costs it, and imported on demand
 * they were two more files for the requests that name them (their SDK clients stay imported on first
 * submit). A module's `create` builds the scheduler from the clients and configuration it is given; the
 * Planner (dry runs), the scheduler descriptions and the Runner of this process are built over the table
 * once per cold start.
 */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { localStateChangeEvent } from '../../lib/events/index.js';
import { Planner, type PlannerOptions, Runner } from '../../lib/runner/index.js';
import {
  type SchedulerDescription,
  type SchedulerFactory,
  SchedulerRegistry,
} from '../../lib/schedulers/registry.js';
import type { KnownScheduler } from '../shared/config.js';
import {
  builtOutbox,
  config,
  created,
  forgetAll,
  localModeHooks,
  onForget,
  runnerStore,
  sessionName,
} from '../shared/container.js';
import { deploymentConfig, HOST_ACCESS_SETTINGS } from '../shared/deployment-config.js';
import * as awsBatch from './aws-batch.js';
import * as awsSageMaker from './aws-sagemaker.js';
import type { SchedulerDeps, SchedulerModule } from './scheduler-module.js';

/** Every known scheduler's module (typed by the config's list, so none can be missing). */
const SCHEDULER_MODULES: Readonly<Record<KnownScheduler, () => Promise<SchedulerModule>>> = {
  aws_batch: async () => awsBatch,
  aws_sagemaker: async () => awsSageMaker,
  local_cwd: () => import('./local-cwd.js'),
  slurm: () => import('./slurm.js'),
  local_docker: () => import('./local-docker.js'),
  lsf: () => import('./lsf.js'),
  kubernetes: () => import('./kubernetes.js'),
  kubernetes_mcad: () => import('./kubernetes-mcad.js'),
};

/** The registry of every enabled scheduler, whose factories are filled in as their modules load. */
class LazySchedulers {
  private readonly factories = new Map<string, SchedulerFactory>();
  readonly registry: SchedulerRegistry;

  constructor(private readonly deps: SchedulerDeps) {
    const entries: Record<string, SchedulerFactory> = {};
    for (const name of deps.config.schedulers) {
      entries[name] = (ctx) => {
        const factory = this.factories.get(name);
        if (factory === undefined) throw new Error(`scheduler ${name} was used before its module was loaded`);
        return factory(ctx);
      };
    }
    this.registry = new SchedulerRegistry(entries, { sessionName: deps.config.sessionName });
  }

  /**
   * Loads the module of `scheduler` (of every enabled scheduler when undefined), once each. A name that is
   * not enabled is left to the registry, which refuses it with the enabled names.
   */
  async load(scheduler: string | undefined): Promise<void> {
    const enabled = this.deps.config.schedulers;
    const wanted = scheduler === undefined ? enabled : enabled.filter((name) => name === scheduler);
    await Promise.all(
      wanted
        .filter((name) => !this.factories.has(name))
        .map(async (name) => {
          // The config admits only KNOWN_SCHEDULERS, each of which has a module (the Record's type).
          const module = await SCHEDULER_MODULES[name as KnownScheduler]();
          this.factories.set(name, await module.create(this.deps));
        }),
    );
  }

  /** What the Planner and the Runner share: the registry, the session and the deployment's host access. */
  plannerOptions(): PlannerOptions {
    return {
      schedulers: this.registry,
      sessionName: sessionName(),
      hostAccess: this.deps.deployment.hostAccess,
      hostAccessSettings: HOST_ACCESS_SETTINGS,
    };
  }
}

function schedulerDeps(submits: boolean): SchedulerDeps {
  let logsClient: Promise<CloudWatchLogsClient> | undefined;
  return {
    submits,
    created,
    logsClient: () => {
      logsClient ??= import('../../lib/schedulers/cloudwatch-logs.js').then(({ CloudWatchLogsClient }) =>
        created(new CloudWatchLogsClient({})),
      );
      return logsClient;
    },
    config: config(),
    deployment: deploymentConfig(),
    emitLocalTransition: async (appId, transition) => {
      await localModeHooks().emitEvent?.(localStateChangeEvent(appId, transition));
    },
  };
}

let translating: LazySchedulers | undefined;
let builtPlanner: Planner | undefined;
let builtRunner: { runner: Runner; schedulers: LazySchedulers } | undefined;
onForget(() => {
  translating = undefined;
  builtPlanner = undefined;
  builtRunner = undefined;
});

/** The schedulers of the Planner and the descriptions: they only translate (no client, nothing to close). */
function translatingSchedulers(): LazySchedulers {
  translating ??= new LazySchedulers(schedulerDeps(false));
  return translating;
}

/**
 * The Planner of this process (dry runs), with the module of `scheduler` loaded (of every enabled scheduler
 * when omitted).
 */
export async function planner(scheduler?: string): Promise<Planner> {
  const schedulers = translatingSchedulers();
  builtPlanner ??= new Planner(schedulers.plannerOptions());
  await schedulers.load(scheduler);
  return builtPlanner;
}

/**
 * Every enabled scheduler with its capabilities and run options (`GET /v1/schedulers`): the registry's
 * description, without the Planner (and the components it materializes).
 */
export async function describeSchedulers(): Promise<SchedulerDescription[]> {
  const schedulers = translatingSchedulers();
  await schedulers.load(undefined);
  return schedulers.registry.describe();
}

/**
 * The full Runner of this process (run, status with refresh, cancel, delete, logs, the reconciler), with the
 * module of `scheduler` loaded (of every enabled scheduler when omitted). A scheduler's SDK clients are
 * created when a request first uses it.
 */
export async function runner(scheduler?: string): Promise<Runner> {
  if (builtRunner === undefined) {
    const schedulers = new LazySchedulers(schedulerDeps(true));
    builtRunner = {
      runner: new Runner({ ...schedulers.plannerOptions(), store: runnerStore() }),
      schedulers,
    };
  }
  const current = builtRunner;
  await current.schedulers.load(scheduler);
  return current.runner;
}

/**
 * Local mode, before the server accepts requests: local_cwd settles the apps a previous server left running
 * (exit codes recorded meanwhile) and adopts the replicas still alive; their state changes go through the
 * in-process bus like any other. Returns the app ids it touched; none when local_cwd is not enabled.
 */
export async function recoverLocalApps(): Promise<string[]> {
  const { LOCAL_CWD, recoverLocalCwd } = await import('./local-cwd.js');
  if (!config().schedulers.includes(LOCAL_CWD)) return [];
  return recoverLocalCwd((await runner(LOCAL_CWD)).scheduler(LOCAL_CWD));
}

/**
 * Closes the Runner's schedulers (local mode shutdown), publishes what the local outbox holds, and forgets
 * the clients and Runners.
 */
export async function closeRunner(): Promise<void> {
  const current = builtRunner?.runner;
  const outbox = builtOutbox();
  forgetAll();
  await current?.close();
  await outbox?.drain?.();
}
