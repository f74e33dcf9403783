/**
 * How a replica's process is started so that it does not depend on the local server staying alive: a tiny
 * `sh` wrapper leads the replica's process group, runs the entrypoint (argv as given, no shell parsing),
 * writes the entrypoint's exit status to `<replica dir>/exitcode`, and exits with it. stdout and stderr are
 * files opened by the server (0600) and handed to the process as file descriptors: no pipe to the server, so
 * a dead server cannot kill a replica with SIGPIPE or block it on a full pipe.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LocalCwdReplicaSpec } from './translate.js';

/** File in the replica's directory holding the entrypoint's exit status, written by the wrapper. */
export const EXIT_CODE_FILE = 'exitcode';

/** The shell that runs the wrapper. */
export const WRAPPER_SHELL = '/bin/sh';

/**
 * The wrapper script. `$1` is the umask (octal), `$2` the exit-code file, the rest the entrypoint and its
 * args. It sets no traps: a signal to the replica's group ends the wrapper too (the server, which sent it,
 * then waits for the rest of the group), and a trap could swallow a signal that arrives before the
 * entrypoint is forked.
 */
export const WRAPPER_SCRIPT = [
  'umask "$1"',
  'f=$2',
  'shift 2',
  '"$@"',
  'c=$?',
  `{ printf '%s\\n' "$c" > "$f"; } 2>/dev/null`,
  'exit "$c"',
].join('\n');

/** The exit-code file of a replica. */
export function exitCodeFileOf(spec: Pick<LocalCwdReplicaSpec, 'stdout'>): string {
  return path.join(path.dirname(spec.stdout), EXIT_CODE_FILE);
}

/**
 * Starts the replica: stdout/stderr files are created 0600 (they must not exist yet) and passed as file
 * descriptors; the process is detached (it leads its own process group) and runs in `spec.cwd` with `env`.
 *
 * @param executable the entrypoint resolved to an absolute path.
 * @param umask the umask the entrypoint runs with (the server's own may be stricter).
 * @throws the `open` error when a log file cannot be created.
 */
export function spawnReplica(
  spec: LocalCwdReplicaSpec,
  executable: string,
  env: Record<string, string | undefined>,
  umask: number,
): ChildProcess {
  const out = openSync(spec.stdout, 'wx', 0o600);
  let err: number | undefined;
  try {
    err = openSync(spec.stderr, 'wx', 0o600);
    return spawn(
      WRAPPER_SHELL,
      [
        '-c',
        WRAPPER_SCRIPT,
        'txs-replica',
        umask.toString(8).padStart(4, '0'),
        exitCodeFileOf(spec),
        executable,
        ...spec.args,
      ],
      { cwd: spec.cwd, env, detached: true, stdio: ['ignore', out, err] },
    );
  } finally {
    closeSync(out);
    if (err !== undefined) closeSync(err);
  }
}

/** The exit status the wrapper recorded, or undefined when it did not (killed, or never got that far). */
export async function readExitCode(spec: Pick<LocalCwdReplicaSpec, 'stdout'>): Promise<number | undefined> {
  try {
    const text = (await readFile(exitCodeFileOf(spec), 'utf8')).trim();
    const code = Number(text);
    return text !== '' && Number.isInteger(code) && code >= 0 && code <= 255 ? code : undefined;
  } catch {
    return undefined;
  }
}
