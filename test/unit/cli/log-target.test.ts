import { describe, expect, it } from 'vitest';
import { parseLogTarget, UsageError } from '../../../lib/cli/index.js';

describe('parseLogTarget', () => {
  it('reads a bare handle as every role and replica', () => {
    expect(parseLogTarget('local_cwd://torchx/echo-k3x9')).toEqual({
      handle: 'local_cwd://torchx/echo-k3x9',
      scheduler: 'local_cwd',
      session: 'torchx',
      appId: 'echo-k3x9',
    });
  });

  it('splits a role and a replica list off the handle', () => {
    expect(parseLogTarget('aws_batch://torchx/gpu-queue:train-k3x9/trainer/0,2')).toEqual({
      handle: 'aws_batch://torchx/gpu-queue:train-k3x9',
      scheduler: 'aws_batch',
      session: 'torchx',
      appId: 'gpu-queue:train-k3x9',
      role: 'trainer',
      replicas: [0, 2],
    });
  });

  it('accepts a role without replicas, an empty session, and a trailing slash', () => {
    expect(parseLogTarget('aws_batch:///q:n/trainer/')).toMatchObject({
      handle: 'aws_batch:///q:n',
      session: '',
      appId: 'q:n',
      role: 'trainer',
    });
    expect(parseLogTarget('local_cwd://torchx/app/role').replicas).toBeUndefined();
  });

  it('allows dots in app ids and role names (TorchX does not)', () => {
    expect(parseLogTarget('local_cwd://torchx/my.app-x/role.a/1')).toMatchObject({
      appId: 'my.app-x',
      role: 'role.a',
      replicas: [1],
    });
  });

  it.each([
    ['echo-k3x9', /no SCHEDULER:\/\/ prefix/],
    ['local_cwd://torchx', /has no APP_ID/],
    ['local_cwd://torchx/', /has no APP_ID/],
    ['local_cwd://torchx/app/role/x', /`x` is not a list of replica indexes/],
    ['local_cwd://torchx/app/role/0/extra', /more than SESSION\/APP_ID\/ROLE\/REPLICAS/],
    ['local cwd://torchx/app', /is not a name/],
  ])('rejects %s', (identifier, message) => {
    expect(() => parseLogTarget(identifier)).toThrow(UsageError);
    expect(() => parseLogTarget(identifier)).toThrow(message);
  });
});
