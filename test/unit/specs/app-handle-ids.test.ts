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

describe('canonical app handles', () => {
  it.each([
    ['a slash in the app id (x/ in front of it)', 'local_cwd://torchx/x/echo-k3x9', 'app id'],
    ['a dot-dot prefix', 'local_cwd://torchx/../echo-k3x9', 'app id'],
    [
      'a Batch queue ARN inside the app id',
      'aws_batch://torchx/arn:aws:batch:us-east-1:123456789012:job-queue/gpu:train-x',
      'app id',
    ],
    ['a percent sign', 'local_cwd://torchx/echo%2Fk3x9', 'app id'],
    ['whitespace', 'local_cwd://torchx/echo k3x9', 'app id'],
    ['a bidi override', 'local_cwd://torchx/echo-\u202Ek3x9', 'app id'],
    ['a zero-width space', 'local_cwd://torchx/echo\u200B-k3x9', 'app id'],
    ['a 5,000-character app id', `local_cwd://torchx/${'a'.repeat(5_000)}`, 'app id'],
    ['a scheduler with a colon', 'aws:batch://torchx/q:n', 'scheduler'],
  ])('refuses %s, so one app has one spelling', (_what, handle, part) => {
    expect(() => parseAppHandle(handle)).toThrow(MalformedAppHandleError);
    expect(() => parseAppHandle(handle)).toThrow(`the ${part}`);
  });

  it('quotes a long or control-laden handle shortened and escaped in the message', () => {
    const error = (() => {
      try {
        parseAppHandle(`x://y/${'a'.repeat(5_000)}\n`);
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error?.message.length).toBeLessThan(500);
    expect(error?.message).not.toContain('\n');
  });

  it('reads back every handle it makes for valid parts', () => {
    for (const [scheduler, appId] of [
      ['aws_batch', 'gpu-queue:train-k3x9'],
      ['aws_sagemaker', 'train-k3x9'],
      ['local_cwd', 'my.app_v2-k3x9'],
    ] as const) {
      expect(parseAppHandle(makeAppHandle(scheduler, 'torchx', appId))).toEqual({
        scheduler,
        session: 'torchx',
        appId,
      });
    }
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
