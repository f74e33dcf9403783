/**
 * Query-string parsing for the API, with errors that name the parameter.
 */
import { ValidationError } from '../../lib/specs/index.js';

/** Parses an integer parameter within bounds. */
export function intParam(
  name: string,
  raw: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw))
    throw ValidationError.forField(name, `must be an integer between ${min} and ${max}, got '${raw}'`);
  const value = Number(raw);
  if (value < min || value > max)
    throw ValidationError.forField(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** Parses a time parameter given as ISO-8601 or epoch milliseconds. */
export function timeParam(name: string, raw: string | undefined): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const date = /^\d+$/.test(raw) ? new Date(Number(raw)) : new Date(raw);
  if (Number.isNaN(date.getTime())) {
    throw ValidationError.forField(
      name,
      `must be an ISO-8601 time (2026-11-22T10:00:00Z) or epoch milliseconds, got '${raw}'`,
    );
  }
  return date;
}

/** Parses a boolean flag (`true`/`false`/`1`/`0`). */
export function boolParam(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw ValidationError.forField(name, `must be true or false, got '${raw}'`);
}

/** Parses a parameter that must match `pattern`; `expected` says what it must be. */
export function patternParam(
  name: string,
  raw: string | undefined,
  pattern: RegExp,
  expected: string,
): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!pattern.test(raw))
    throw ValidationError.forField(name, `must be ${expected}, got '${raw.slice(0, 64)}'`);
  return raw;
}
