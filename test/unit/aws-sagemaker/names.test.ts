import { describe, expect, it } from 'vitest';
import {
  sanitizeJobNamePrefix,
  TRAINING_JOB_NAME_PATTERN,
  trainingJobName,
} from '../../../lib/schedulers/aws-sagemaker/names.js';

describe('trainingJobName', () => {
  it.each([
    ['torchx_utils_python', 'torchx-utils-python-t4rcs9x6sv1m'],
    ['exp/run.v2', 'exp-run-v2-t4rcs9x6sv1m'],
    ['--lead--and--trail--', 'lead-and-trail-t4rcs9x6sv1m'],
    ['modèle entraîné', 'mod-le-entra-n-t4rcs9x6sv1m'],
    ['', 'torchx-t4rcs9x6sv1m'],
    ['/', 'torchx-t4rcs9x6sv1m'],
    ['___', 'torchx-t4rcs9x6sv1m'],
    ['Train-ABC', 'Train-ABC-t4rcs9x6sv1m'],
  ])('%j → %s', (prefix, expected) => {
    expect(trainingJobName(prefix, 't4rcs9x6sv1m')).toBe(expected);
    expect(expected).toMatch(TRAINING_JOB_NAME_PATTERN);
  });

  it('cuts long prefixes so the 14-character suffix fits in 63 characters, without a trailing hyphen', () => {
    const name = trainingJobName(`${'a'.repeat(47)}-${'b'.repeat(30)}`, 'tqsrbbl31fnwwd');
    expect(name).toBe(`${'a'.repeat(47)}-tqsrbbl31fnwwd`);
    expect(name).toHaveLength(62);
    expect(name).toMatch(TRAINING_JOB_NAME_PATTERN);
  });

  it('sanitises prefixes on their own', () => {
    expect(sanitizeJobNamePrefix('a__b..c')).toBe('a-b-c');
  });
});
