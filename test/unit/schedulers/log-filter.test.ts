import { describe, expect, it } from 'vitest';
import { compileLogFilter, MAX_LOG_REGEX_LENGTH } from '../../../lib/schedulers/log-filter.js';
import { filterLines } from '../../../lib/schedulers/logs.js';
import { ValidationError } from '../../../lib/specs/index.js';

function regexIssue(pattern: string): { path: string; message: string } | undefined {
  try {
    compileLogFilter(pattern);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as ValidationError).issues[0];
  }
  return undefined;
}

describe('compileLogFilter', () => {
  it('means no filter for an absent or empty pattern', () => {
    expect(compileLogFilter(undefined)).toBeUndefined();
    expect(compileLogFilter('')).toBeUndefined();
  });

  it('keeps lines the pattern matches anywhere (search, not full match)', () => {
    const filter = compileLogFilter('loss=\\d+');
    expect(filter?.source).toBe('loss=\\d+');
    expect(filterLines(['epoch 1 loss=3', 'acc=2', 'loss=x', 'final loss=10 ok'], filter)).toEqual([
      'epoch 1 loss=3',
      'final loss=10 ok',
    ]);
  });

  it('supports the usual syntax: anchors, classes, (?i), named groups, Unicode classes', () => {
    expect(compileLogFilter('^ERROR')?.matches('ERROR: x')).toBe(true);
    expect(compileLogFilter('^ERROR')?.matches('an ERROR')).toBe(false);
    expect(compileLogFilter('(?i)nccl')?.matches('NCCL WARN')).toBe(true);
    expect(compileLogFilter('(?<rank>rank \\d+)')?.matches('rank 7 ready')).toBe(true);
    expect(compileLogFilter('\\p{Greek}')?.matches('λ=0.1')).toBe(true);
  });

  it('runs the catastrophic-backtracking probe ^(a+)+$ and returns the right lines', () => {
    // A JavaScript RegExp needs ~2^n steps per non-matching line here (21 s for 10 lines on the local server).
    const lines = Array.from({ length: 10 }, (_, i) => `${'a'.repeat(40)}${i % 2 === 0 ? '' : '!'}`);
    const kept = filterLines(lines, compileLogFilter('^(a+)+$'));
    expect(kept).toEqual(lines.filter((_, i) => i % 2 === 0));
    expect(kept).toHaveLength(5);
  });

  it.each([
    ['a backreference', '(a)\\1', 'backreferences'],
    ['a lookahead', 'foo(?=bar)', 'lookahead'],
    ['a negative lookahead', 'foo(?!bar)', 'lookahead'],
    ['a lookbehind', '(?<=x)a', 'lookbehind'],
    ['a malformed class', '[', 'RE2 syntax'],
    ['a nested repeat over 1,000', '(a{100}){100}', 'RE2 syntax'],
  ])('refuses %s with an issue naming regex and the fix', (_name, pattern, hint) => {
    const issue = regexIssue(pattern);
    expect(issue?.path).toBe('regex');
    expect(issue?.message).toContain(hint);
  });

  it(`refuses a pattern longer than ${MAX_LOG_REGEX_LENGTH} characters`, () => {
    const issue = regexIssue('a'.repeat(MAX_LOG_REGEX_LENGTH + 1));
    expect(issue).toEqual({
      path: 'regex',
      message: `is ${MAX_LOG_REGEX_LENGTH + 1} characters long; use at most ${MAX_LOG_REGEX_LENGTH} characters`,
    });
    expect(
      compileLogFilter('a'.repeat(MAX_LOG_REGEX_LENGTH))?.matches('a'.repeat(MAX_LOG_REGEX_LENGTH)),
    ).toBe(true);
  });
});
