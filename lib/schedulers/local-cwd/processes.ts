/**
 * Operating-system helpers of the local scheduler: finding an entrypoint on a PATH, signalling a replica's
 * process group and telling whether it still has live members, and telling whether a recorded process is
 * still the same live process (pid reuse aware).
 *
 * @module
 */
import { accessSync, constants as fsConstants, readFileSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import path from 'node:path';

/** A process as recorded on disk: its pid and, where the OS tells, its start time (guards pid reuse). */
export interface ProcessRef {
  pid: number;
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22); absent where there is no /proc. */
  startTime?: string;
}

/** What is known about a recorded process now. `unknown`: alive under that pid, but maybe not the same one. */
export type ProcessLiveness = 'alive' | 'dead' | 'unknown';

const HAS_PROC = (() => {
  try {
    return statSync('/proc/self/stat').isFile();
  } catch {
    return false;
  }
})();

/**
 * The start time of process `pid` from `/proc/<pid>/stat`, or undefined when the process does not exist, is a
 * zombie, or the OS has no /proc (macOS).
 */
export function processStartTime(pid: number): string | undefined {
  if (!HAS_PROC) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may contain spaces and parentheses): field n is at index n - 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return fields[19];
}

/** A reference to process `pid`, with its start time where available. */
export function processRef(pid: number): ProcessRef {
  const startTime = processStartTime(pid);
  return startTime === undefined ? { pid } : { pid, startTime };
}

/**
 * Whether the recorded process still runs. With a recorded start time (Linux) the answer is exact: a pid
 * reused by another process counts as dead. Without one, a live pid is `unknown`.
 */
export function processLiveness(ref: ProcessRef): ProcessLiveness {
  if (ref.startTime !== undefined && HAS_PROC) {
    return processStartTime(ref.pid) === ref.startTime ? 'alive' : 'dead';
  }
  try {
    process.kill(ref.pid, 0);
    return 'unknown';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? 'unknown' : 'dead';
  }
}

/**
 * Sends `signal` to the process group led by `pid` (replicas are spawned detached, so each leads its own
 * group and `bash -c` children are signalled too). Returns false when the group no longer exists.
 */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}

/** Process groups with a member that is not a zombie, from one scan of /proc (shared by concurrent callers). */
let groupScan: { at: number; groups: Promise<Set<number>> } | undefined;

async function scanLiveGroups(): Promise<Set<number>> {
  const groups = new Set<number>();
  const entries = await readdir('/proc').catch(() => [] as string[]);
  await Promise.all(
    entries
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
        if (stat === undefined) return;
        // After the command name: state, ppid, pgrp.
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (state !== 'Z' && state !== 'X') groups.add(Number(pgrp));
      }),
  );
  return groups;
}

/**
 * True while process group `pgid` has a member that is not a zombie. On Linux this reads /proc (so orphans
 * that exited but were never reaped, as under a container's PID 1 that does not reap, do not count); elsewhere
 * any member counts. Scans are shared by callers within 15 ms of each other.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  if (!HAS_PROC) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  const now = Date.now();
  if (groupScan === undefined || now - groupScan.at > 15) groupScan = { at: now, groups: scanLiveGroups() };
  return (await groupScan.groups).has(pgid);
}

/** The shell convention for a process killed by a signal: 128 + the signal number (SIGKILL → 137). */
export function exitCodeOfSignal(signal: NodeJS.Signals): number {
  const signalNumber = osConstants.signals[signal] as number | undefined;
  return 128 + (signalNumber ?? 0);
}

/** True when `file` is a regular file this process may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves an entrypoint the way `execvp` does: a name with a `/` is taken relative to `cwd`; a bare name is
 * looked up in each directory of `searchPath` (relative directories, and the empty entry, relative to `cwd`).
 * `isExecutable` decides for each candidate (default: an executable regular file on disk).
 *
 * @returns the absolute path of the executable, or undefined when none is found.
 * @example
 * ```ts
 * findExecutable('sh', '/usr/bin:/bin', '/tmp'); // '/usr/bin/sh' (or '/bin/sh')
 * ```
 */
export function findExecutable(
  entrypoint: string,
  searchPath: string | undefined,
  cwd: string,
  isExecutable: (file: string) => boolean = isExecutableFile,
): string | undefined {
  if (entrypoint === '') return undefined;
  if (entrypoint.includes('/')) {
    const candidate = path.resolve(cwd, entrypoint);
    return isExecutable(candidate) ? candidate : undefined;
  }
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    const candidate = path.resolve(cwd, dir, entrypoint);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** True when `dir` exists and is a directory. */
export function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
