/**
 * Times on the command line (`--since 10m`, `--until 2026-01-15T12:00:00Z`) and on screen.
 *
 * @module
 */
import { UsageError } from './errors.js';

const RELATIVE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)$/;
const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Parses a time argument into an ISO-8601 string: an ISO-8601 date/time, epoch milliseconds, or a
 * duration before `now` (`30s`, `10m`, `2h`, `1d`, `1w`).
 *
 * @throws UsageError naming `flag` when the value is none of these.
 * @example
 * ```ts
 * parseTimeArg('10m', '--since', Date.parse('2026-01-15T12:00:00Z')); // '2026-01-15T11:50:00.000Z'
 * ```
 */
export function parseTimeArg(value: string, flag: string, now: number): string {
  const text = value.trim();
  const relative = RELATIVE.exec(text);
  if (relative) {
    return new Date(now - Number(relative[1]) * (UNIT_MS[relative[2] ?? 's'] ?? 1_000)).toISOString();
  }
  if (/^\d{10,}$/.test(text)) return new Date(Number(text)).toISOString();
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const parsed = Date.parse(text);
    if (!Number.isNaN(parsed)) return new Date(parsed).toISOString();
  }
  throw new UsageError(
    `${flag} ${value} is not a time`,
    `give an ISO-8601 time (2026-01-15T12:00:00Z), epoch milliseconds, or a duration ago (30s, 10m, 2h, 1d)`,
  );
}

/** Epoch ms of an API time (ISO-8601 string or epoch ms), or undefined. */
export function toEpochMs(value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** `YYYY-MM-DD HH:MM:SS` in local time (as TorchX prints times), or `-` when unknown. */
export function formatLocalTime(value: string | number | undefined): string {
  const ms = toEpochMs(value);
  if (ms === undefined) return '-';
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * A short duration: `0.4s`, `12.3s`, `4m05s`, `2h03m`.
 *
 * @example
 * ```ts
 * formatElapsed(245_000); // '4m05s'
 * ```
 */
export function formatElapsed(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < 60_000) return `${(clamped / 1000).toFixed(1)}s`;
  const totalSeconds = Math.floor(clamped / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return `${hours}h${String(minutes).padStart(2, '0')}m`;
  return `${minutes}m${String(seconds).padStart(2, '0')}s`;
}
