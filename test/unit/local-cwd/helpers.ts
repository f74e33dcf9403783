import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createLocalCwdScheduler,
  type LocalCwdScheduler,
  type LocalCwdSchedulerOptions,
  type LocalStateChange,
  processStartTime,
} from '../../../lib/schedulers/local-cwd/index.js';
import { type AppDef, makeAppDef, makeRole, type RoleInit } from '../../../lib/specs/index.js';

/** A PATH that finds sh, echo, sleep, printf and friends on Linux and macOS. */
export const TEST_PATH = '/usr/local/bin:/usr/bin:/bin';

/** A scheduler on a fresh temp data dir, with its state changes collected. */
export interface Harness {
  scheduler: LocalCwdScheduler;
  dataDir: string;
  changes: LocalStateChange[];
  errors: unknown[];
  /** Another scheduler on the same data dir (a "restarted" local server). */
  restart: (options?: Partial<LocalCwdSchedulerOptions>) => LocalCwdScheduler;
  cleanup: () => Promise<void>;
}

export async function makeHarness(options: Partial<LocalCwdSchedulerOptions> = {}): Promise<Harness> {
  const root = await mkdtemp(path.join(tmpdir(), 'txs-local-cwd-'));
  const dataDir = path.join(root, 'local_cwd');
  const changes: LocalStateChange[] = [];
  const errors: unknown[] = [];
  const created: LocalCwdScheduler[] = [];
  const make = (extra: Partial<LocalCwdSchedulerOptions>) => {
    const scheduler = createLocalCwdScheduler(
      { sessionName: 'test', sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 10))) },
      {
        dataDir,
        cwd: root,
        env: { PATH: TEST_PATH },
        killGracePeriodMs: 5_000,
        onStateChange: (change) => {
          changes.push(change);
        },
        onError: (error) => errors.push(error),
        ...extra,
      },
    );
    created.push(scheduler);
    return scheduler;
  };
  const scheduler = make(options);
  return {
    scheduler,
    dataDir,
    changes,
    errors,
    restart: (extra = {}) => make({ ...options, ...extra }),
    cleanup: async () => {
      for (const s of created) await s.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** An app with one role running `entrypoint args...`. */
export function appOf(name: string, role: Partial<RoleInit> & { entrypoint: string }): AppDef {
  return makeAppDef({ name, roles: [makeRole({ name: 'worker', image: 'ignored:latest', ...role })] });
}

/** A `sh -c <script>` role. */
export function shApp(name: string, script: string, role: Partial<RoleInit> = {}): AppDef {
  return appOf(name, { entrypoint: 'sh', args: ['-c', script], ...role });
}

/** Reads a replica's log to the end (following it while the app runs) until a line contains `text`. */
export async function waitForLine(
  scheduler: LocalCwdScheduler,
  appId: string,
  text: string,
  query: { role?: string; replica?: number } = {},
): Promise<void> {
  for await (const line of scheduler.logIter(appId, {
    role: query.role ?? 'worker',
    replica: query.replica ?? 0,
    tail: true,
    pollIntervalMs: 10,
  })) {
    if (line.includes(text)) return;
  }
  throw new Error(`the log ended without a line containing ${text}`);
}

/** Whether a process runs (a zombie does not count: PID 1 of a container may never reap it). */
export function isAlive(pid: number): boolean {
  if (existsSync('/proc/self/stat')) return processStartTime(pid) !== undefined;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
