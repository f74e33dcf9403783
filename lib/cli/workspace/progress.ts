/**
 * Progress while a workspace is hashed and packed: a throttle that stays silent for small trees and then
 * reports at a steady interval, and the line the CLI prints for a report.
 *
 * @module
 */

/** One progress report. */
export interface PackProgress {
  /** `hashing`: reading files the cache does not know; `packing`: writing the archive. */
  readonly phase: 'hashing' | 'packing';
  /** Files done so far in this phase, and their bytes. */
  readonly files: number;
  readonly bytes: number;
  /** Files and bytes this phase will read in all. */
  readonly totalFiles: number;
  readonly totalBytes: number;
}

/** The default interval between reports, and the quiet time before the first one. */
export const PROGRESS_INTERVAL_MS = 500;

/**
 * Wraps `report` so it is called at most once per `intervalMs`, and not at all during the first
 * `intervalMs` after the wrapper is made: a workspace packed in under half a second prints nothing.
 */
export function throttleProgress<P = PackProgress>(
  report: (progress: P) => void,
  intervalMs = PROGRESS_INTERVAL_MS,
  now: () => number = () => performance.now(),
): (progress: P) => void {
  let next = now() + intervalMs;
  return (progress) => {
    const time = now();
    if (time < next) return;
    next = time + intervalMs;
    report(progress);
  };
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** A byte count for people: `512 B`, `3.4 MiB`, `210 MiB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 10 ? 0 : 1;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** A workspace archive in words, e.g. `3f2a…c9 (41 files, 1.2 MiB)`: what `txs` and the dashboard show. */
export function workspaceSummary(workspace: { sha256: string; size: number; fileCount: number }): string {
  const files = `${workspace.fileCount} file${workspace.fileCount === 1 ? '' : 's'}`;
  return `${workspace.sha256} (${files}, ${formatBytes(workspace.size)})`;
}

/** The stderr line while an archive is sent, e.g. `uploading workspace: 210 MiB of 500 MiB`. */
export function formatUploadProgress(sent: number, total: number): string {
  return `uploading workspace: ${formatBytes(sent)} of ${formatBytes(total)}`;
}

/** The stderr line for a report, e.g. `packing workspace: 1,234 of 5,000 files, 210 MiB of 500 MiB`. */
export function formatProgress(progress: PackProgress): string {
  const count = new Intl.NumberFormat('en-US');
  return (
    `${progress.phase} workspace: ${count.format(progress.files)} of ${count.format(progress.totalFiles)} files, ` +
    `${formatBytes(progress.bytes)} of ${formatBytes(progress.totalBytes)}`
  );
}
