/**
 * Why a local app failed, in the words of its failing replica: the last lines of its stderr, appended to the
 * app's reason so that `txs status` and `txs run --wait` show `torchrun: command not found` without a trip
 * to `txs log`.
 *
 * @module
 */
import { open } from 'node:fs/promises';
import type { LocalAppRecord } from './app-store.js';

/** Lines of the failing replica's stderr added to the reason. */
export const STDERR_TAIL_LINES = 5;
/** Bytes read from the end of stderr to find them. */
export const STDERR_TAIL_BYTES = 4096;
/** Longest line kept (longer ones are cut with `…`). */
export const STDERR_TAIL_LINE_CHARS = 300;

/**
 * The last `lines` non-empty lines of `file` (at most its last `maxBytes`), or [] when it cannot be read.
 *
 * @example
 * ```ts
 * await lastLines('/data/local_cwd/app-1/worker/0/stderr.log'); // ['bash: torchrun: command not found']
 * ```
 */
export async function lastLines(
  file: string,
  lines = STDERR_TAIL_LINES,
  maxBytes = STDERR_TAIL_BYTES,
): Promise<string[]> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, 'r');
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    const text = buffer.toString('utf8').split('\n');
    if (start > 0) text.shift(); // a partial first line
    return text
      .map((line) => line.replace(/\r$/, ''))
      .filter((line) => line.trim() !== '')
      .slice(-lines)
      .map((line) =>
        line.length > STDERR_TAIL_LINE_CHARS ? `${line.slice(0, STDERR_TAIL_LINE_CHARS)}…` : line,
      );
  } catch {
    return [];
  } finally {
    await handle?.close();
  }
}

/**
 * The reason of a FAILED app with the last lines of its failing replica's stderr appended (the replica its
 * reason names, else the first that exited non-zero); the reason unchanged otherwise.
 */
export async function reasonWithStderrTail(record: LocalAppRecord): Promise<string | undefined> {
  const reason = record.reason;
  if (record.state !== 'FAILED' || reason === undefined) return reason;
  const failed =
    record.replicas.find((r) => reason.startsWith(`${r.role}[${r.replicaId}] `)) ??
    record.replicas.find((r) => r.state === 'FAILED' && r.exitCode !== undefined && r.exitCode !== 0);
  if (failed === undefined) return reason;
  const spec = record.request.replicas.find(
    (s) => s.role === failed.role && s.replicaId === failed.replicaId,
  );
  if (spec === undefined) return reason;
  const tail = await lastLines(spec.stderr);
  if (tail.length === 0) return reason;
  return `${reason}; last lines of ${failed.role}[${failed.replicaId}]'s stderr:\n${tail.map((l) => `  ${l}`).join('\n')}`;
}
