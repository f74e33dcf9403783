/**
 * How a replica's process is started so that it does not depend on the local server staying alive, and so
 * that no replica can run before the server has recorded its pid: a tiny `sh` wrapper leads the replica's
 * process group and first waits at a gate (a line on an inherited socket, fd 3) that the server opens only once
 * the pid is in `app.json`. If the server dies before that, the socket closes, the wrapper marks its exit file
 * "never started" and exits without running anything. Released, it runs the entrypoint (argv as given, no
 * shell parsing), writes the entrypoint's exit status into `<replica dir>/exitcode` and exits with it.
 *
 * The exit file is created by the server, at its full size, before the process starts; the wrapper overwrites
 * it in place (`1<>`, no truncation), which needs no new disk space: a job that filled the disk with its own
 * output still gets its exit status recorded. stdout and stderr are files opened by the server (0600) and
 * handed to the process as file descriptors: no pipe to the server, so a dead server cannot kill a replica
 * with SIGPIPE or block it on a full pipe.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { LocalCwdReplicaSpec } from './translate.js';

/** File in the replica's directory holding the entrypoint's exit status, written by the wrapper. */
export const EXIT_CODE_FILE = 'exitcode';

/** The shell that runs the wrapper. */
export const WRAPPER_SHELL = '/bin/sh';

/** Width of the exit status field of the exit file (`255 ` or `none`); a newline follows. */
const EXIT_FIELD_WIDTH = 4;

/** What the wrapper writes to the exit file when the server never released its gate. */
export const NEVER_RAN_MARK = 'none';

/** The line the server sends on the gate to let the replica run. */
const GATE_OPEN = 'go\n';

/**
 * The wrapper script. `$1` is the umask (octal), `$2` the exit-code file, the rest the entrypoint and its
 * args. fd 3 is the gate: a line `go` lets the entrypoint run; end of file (the server died, or stopped the
 * app before releasing it) marks the exit file and exits 125 without running it. The gate is closed before
 * the entrypoint starts, so the entrypoint never holds it. No traps: a signal to the replica's group ends
 * the wrapper too (the server, which sent it, then waits for the rest of the group), and a trap could
 * swallow a signal that arrives before the entrypoint is forked.
 */
export const WRAPPER_SCRIPT = [
  'umask "$1"',
  'f=$2',
  'shift 2',
  'g=',
  'read -r g <&3',
  'exec 3<&-',
  `if [ "$g" != go ]; then { printf '%-${EXIT_FIELD_WIDTH}s' ${NEVER_RAN_MARK} 1<>"$f"; } 2>/dev/null; exit 125; fi`,
  '"$@"',
  'c=$?',
  `{ printf '%-${EXIT_FIELD_WIDTH}s' "$c" 1<>"$f"; } 2>/dev/null`,
  'exit "$c"',
].join('\n');

/** The exit-code file of a replica. */
export function exitCodeFileOf(spec: Pick<LocalCwdReplicaSpec, 'stdout'>): string {
  return path.join(path.dirname(spec.stdout), EXIT_CODE_FILE);
}

/** A replica's process waiting at its gate: it runs nothing until {@link GatedReplica.release}. */
export interface GatedReplica {
  child: ChildProcess;
  /** Lets the entrypoint run. Call only once the process's pid is recorded. */
  release(): void;
  /** Closes the gate without releasing it: the wrapper exits (125) without running the entrypoint. */
  abandon(): void;
}

/** Creates the exit file at its full size (blank: no status yet), so that writing the status needs no space. */
function preallocateExitFile(file: string): void {
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeSync(fd, `${' '.repeat(EXIT_FIELD_WIDTH)}\n`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Starts the replica's wrapper, held at its gate: the exit file is preallocated, stdout/stderr files are
 * created 0600 (none of the three may exist yet) and passed as file descriptors; the process is detached (it
 * leads its own process group) and runs in `spec.cwd` with `env`.
 *
 * @param executable the entrypoint resolved to an absolute path.
 * @param umask the umask the entrypoint runs with (the server's own may be stricter).
 * @throws the `open` error when a file cannot be created (for example ENOSPC); nothing is started then.
 */
export function spawnGatedReplica(
  spec: LocalCwdReplicaSpec,
  executable: string,
  env: Record<string, string | undefined>,
  umask: number,
): GatedReplica {
  const exitFile = exitCodeFileOf(spec);
  preallocateExitFile(exitFile);
  const out = openSync(spec.stdout, 'wx', 0o600);
  let err: number | undefined;
  let child: ChildProcess;
  try {
    err = openSync(spec.stderr, 'wx', 0o600);
    child = spawn(
      WRAPPER_SHELL,
      [
        '-c',
        WRAPPER_SCRIPT,
        'txs-replica',
        umask.toString(8).padStart(4, '0'),
        exitFile,
        executable,
        ...spec.args,
      ],
      { cwd: spec.cwd, env, detached: true, stdio: ['ignore', out, err, 'pipe'] },
    );
  } finally {
    closeSync(out);
    if (err !== undefined) closeSync(err);
  }
  const gate = child.stdio[3] as Writable | null | undefined;
  // A wrapper that died before reading its gate makes the write fail (EPIPE): its exit says what happened.
  gate?.on('error', () => undefined);
  let closed = false;
  const close = (line: string) => {
    if (closed || gate === null || gate === undefined) return;
    closed = true;
    gate.end(line);
  };
  return { child, release: () => close(GATE_OPEN), abandon: () => close('') };
}

/** What a replica's exit file says. */
export type RecordedExit =
  /** The entrypoint's exit status. */
  | { kind: 'exited'; code: number }
  /** The server never released the replica's gate: the entrypoint never ran. */
  | { kind: 'never-ran' }
  /** Nothing recorded: the wrapper was killed (or has not ended). */
  | { kind: 'unknown' };

/** What the replica's wrapper recorded in its exit file. */
export async function readRecordedExit(spec: Pick<LocalCwdReplicaSpec, 'stdout'>): Promise<RecordedExit> {
  let text: string;
  try {
    text = (await readFile(exitCodeFileOf(spec), 'utf8')).trim();
  } catch {
    return { kind: 'unknown' };
  }
  if (text === NEVER_RAN_MARK) return { kind: 'never-ran' };
  const code = Number(text);
  return text !== '' && Number.isInteger(code) && code >= 0 && code <= 255
    ? { kind: 'exited', code }
    : { kind: 'unknown' };
}

/** The exit status the wrapper recorded, or undefined when it did not (killed, never ran, or still running). */
export async function readExitCode(spec: Pick<LocalCwdReplicaSpec, 'stdout'>): Promise<number | undefined> {
  const recorded = await readRecordedExit(spec);
  return recorded.kind === 'exited' ? recorded.code : undefined;
}
