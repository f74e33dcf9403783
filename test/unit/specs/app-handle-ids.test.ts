import { describe, expect, it } from 'vitest';
import {
  encodeId,
  MalformedAppHandleError,
  makeAppHandle,
  makeUnique,
  parseAppHandle,
  randomId,
} from '../../../lib/specs/index.js';

describe('app handles', () => {
  it('makes {scheduler}://{session}/{appId}', () => {
    expect(makeAppHandle('aws_batch', 'torchx', 'testqueue:app-name-42')).toBe(
      'aws_batch://torchx/testqueue:app-name-42',
    );
  });

  it('parses a Batch handle', () => {
    expect(parseAppHandle('aws_batch://torchx/testqueue:app-name-42')).toEqual({
      scheduler: 'aws_batch',
      session: 'torchx',
      appId: 'testqueue:app-name-42',
    });
  });

  it('accepts an empty session', () => {
    expect(parseAppHandle('aws_batch:///q:n')).toEqual({ scheduler: 'aws_batch', session: '', appId: 'q:n' });
  });

  it('raises MalformedAppHandleError with the expected form', () => {
    expect(() => parseAppHandle('not-a-handle')).toThrow(MalformedAppHandleError);
    expect(() => parseAppHandle('x://y')).toThrow(
      'x://y is not of the form: <scheduler_backend>://<session_name>/<app_id>',
    );
  });
});

describe('unique ids', () => {
  it.each([
    [0n, ''],
    [1n, 'c'],
    [20n, 'bc'],
    [0x0123456789abcdefn, 't4rcs9x6sv1m'],
    [2n ** 64n - 1n, 'tqsrbbl31fnwwd'],
  ])('encodes %s as %j like TorchX', (value, expected) => {
    expect(encodeId(value)).toBe(expected);
  });

  it('makes 1–14 characters starting with a consonant, never an 8', () => {
    for (let i = 0; i < 200; i++) {
      const id = randomId();
      expect(id).toMatch(/^([bcdfghjklmnpqrstvwxz][bcdfghjklmnpqrstvwxz012345679]{0,13})?$/);
    }
  });

  it('appends the id to the name', () => {
    expect(makeUnique('train', 'abc')).toBe('train-abc');
  });
});
