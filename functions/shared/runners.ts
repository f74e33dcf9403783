/**
 * The full Runner (run, status with refresh, cancel, delete, logs, the reconciler), built on the container's
 * store and clients on first use, once per cold start. The AWS schedulers come with this module; the SDK-free
 * ones are loaded by a dynamic `import()` when a request first names one (`backends/schedulers.ts`). Each
 * scheduler, and its SDK clients, is created when a request first uses it.
 */
import { Runner } from '../../lib/runner/index.js';
import { SCHEDULER_MODULES } from './backends/schedulers.js';
import { builtOutbox, config, forgetAll, onForget, runnerStore } from './container.js';
import { type LazyRegistry, lazyRegistry, loadSchedulers, plannerOptions } from './scheduler-modules.js';

let built: { runner: Runner; schedulers: LazyRegistry } | undefined;
onForget(() => {
  built = undefined;
});

/**
 * The full Runner of this process, with the module of `scheduler` loaded (of every enabled scheduler when
 * omitted). Scheduler SDK clients are created when a request first uses their scheduler.
 */
export async function runner(scheduler?: string): Promise<Runner> {
  if (built === undefined) {
    const schedulers = lazyRegistry(SCHEDULER_MODULES);
    built = { runner: new Runner({ ...plannerOptions(schedulers), store: runnerStore() }), schedulers };
  }
  const current = built;
  await loadSchedulers(current.schedulers, scheduler);
  return current.runner;
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
 * Closes the Runner's schedulers (local mode shutdown), publishes what the local outbox holds, and forgets
 * the clients and Runners.
 */
export async function closeRunner(): Promise<void> {
  const current = built?.runner;
  const outbox = builtOutbox();
  forgetAll();
  await current?.close();
  await outbox?.drain?.();
}
