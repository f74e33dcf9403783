import { describe, expect, it } from 'vitest';
import { readDeploymentConfig } from '../../../functions/shared/deployment-config.js';
import { HttpRequestError } from '../../../functions/shared/http-errors.js';
import { callerOf, canonicalPrincipal, type IdentityConfig } from '../../../functions/shared/identity.js';

const A = '123456789012';
const NONE: IdentityConfig = { sessionOwnerRoles: [], admins: new Set() };
const owner = (userArn: string, config: IdentityConfig = NONE, cognitoIdentityId?: string) =>
  callerOf({ userArn, cognitoIdentityId: cognitoIdentityId ?? null }, config).owner;
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof HttpRequestError ? error.code : 'other';
  }
  return 'none';
};

describe('callerOf', () => {
  it('makes every session of a role one owner: the role', () => {
    const sessions = ['alice', 'i-0123456789abcdef0', 'botocore-session-1700000000', 'alice@example.com'];
    const owners = new Set(sessions.map((s) => owner(`arn:aws:sts::${A}:assumed-role/ml-team/${s}`)));
    expect([...owners]).toEqual([`arn:aws:iam::${A}:role/ml-team`]);
  });

  it('keeps the partition of the caller', () => {
    expect(owner(`arn:aws-cn:sts::${A}:assumed-role/ml/s1`)).toBe(`arn:aws-cn:iam::${A}:role/ml`);
  });

  it('makes each session an owner only for the roles the deployment names (prefix with *)', () => {
    const config: IdentityConfig = {
      sessionOwnerRoles: ['AWSReservedSSO_*', 'exact-role'],
      admins: new Set(),
    };
    const sso = `arn:aws:sts::${A}:assumed-role/AWSReservedSSO_ML_0123/dave@example.com`;
    expect(owner(sso, config)).toBe(sso);
    const exact = `arn:aws:sts::${A}:assumed-role/exact-role/erin`;
    expect(owner(exact, config)).toBe(exact);
    expect(owner(`arn:aws:sts::${A}:assumed-role/exact-role-2/erin`, config)).toBe(
      `arn:aws:iam::${A}:role/exact-role-2`,
    );
  });

  it('makes an IAM user its user ARN without the IAM path', () => {
    expect(owner(`arn:aws:iam::${A}:user/alice`)).toBe(`arn:aws:iam::${A}:user/alice`);
    expect(owner(`arn:aws:iam::${A}:user/division/team/alice`)).toBe(`arn:aws:iam::${A}:user/alice`);
  });

  it('makes a Cognito identity its identity id (set by AWS), never the pool role', () => {
    const poolRole = `arn:aws:sts::${A}:assumed-role/pool-auth/CognitoIdentityCredentials`;
    expect(owner(poolRole, NONE, 'us-east-1:11111111-2222-3333-4444-555555555555')).toBe(
      'cognito-identity:us-east-1:11111111-2222-3333-4444-555555555555',
    );
    const admins: IdentityConfig = {
      sessionOwnerRoles: [],
      admins: new Set([`arn:aws:iam::${A}:role/pool-auth`]),
    };
    expect(callerOf({ userArn: poolRole, cognitoIdentityId: 'us-east-1:x' }, admins).admin).toBe(false);
  });

  it('refuses root, federation-token users and unknown principals with 403 Forbidden', () => {
    expect(codeOf(() => owner(`arn:aws:iam::${A}:root`))).toBe('Forbidden');
    expect(codeOf(() => owner(`arn:aws:sts::${A}:federated-user/anyone`))).toBe('Forbidden');
    expect(codeOf(() => owner(`arn:aws:sts::${A}:assumed-role/only-role`))).toBe('Forbidden');
    expect(codeOf(() => owner(`arn:aws:s3:::bucket`))).toBe('Forbidden');
  });

  it('answers 401 when the request carries no identity', () => {
    expect(codeOf(() => callerOf({ userArn: null }, NONE))).toBe('Unauthenticated');
    expect(codeOf(() => callerOf(undefined, NONE))).toBe('Unauthenticated');
  });

  it('takes a local name (not an ARN) as given', () => {
    expect(owner('alice')).toBe('alice');
  });

  it('makes admins of configured roles (every session) and users', () => {
    const config: IdentityConfig = {
      sessionOwnerRoles: ['AWSReservedSSO_*'],
      admins: new Set([`arn:aws:iam::${A}:role/platform`, `arn:aws:iam::${A}:role/AWSReservedSSO_Admin_1`]),
    };
    expect(callerOf({ userArn: `arn:aws:sts::${A}:assumed-role/platform/any` }, config).admin).toBe(true);
    const sso = callerOf({ userArn: `arn:aws:sts::${A}:assumed-role/AWSReservedSSO_Admin_1/zoe` }, config);
    expect(sso).toEqual({ owner: `arn:aws:sts::${A}:assumed-role/AWSReservedSSO_Admin_1/zoe`, admin: true });
    expect(callerOf({ userArn: `arn:aws:sts::${A}:assumed-role/platformx/any` }, config).admin).toBe(false);
  });
});

describe('canonicalPrincipal', () => {
  it('drops IAM paths from role and user ARNs', () => {
    expect(canonicalPrincipal(`arn:aws:iam::${A}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_X`)).toBe(
      `arn:aws:iam::${A}:role/AWSReservedSSO_X`,
    );
    expect(canonicalPrincipal(`arn:aws:iam::${A}:user/ops/zoe`)).toBe(`arn:aws:iam::${A}:user/zoe`);
  });
});

describe('readDeploymentConfig', () => {
  it('defaults to no admins, role owners, no host access, any instance type and no stack tag', () => {
    const config = readDeploymentConfig({});
    expect(config.identity.admins.size).toBe(0);
    expect(config.hostAccess).toEqual({ privileged: false, hostPathPrefixes: [], devices: [] });
    expect(config.sageMakerInstanceTypes).toBeUndefined();
    expect(config.stackTags).toEqual({});
    expect(config.batchNamePrefix).toBe('');
    expect(config.workspaceFetchImage).toBeUndefined();
  });

  it('reads every setting', () => {
    const config = readDeploymentConfig({
      TXS_ADMIN_PRINCIPALS: `arn:aws:iam::${A}:role/ops/platform, alice`,
      TXS_SESSION_OWNER_ROLES: 'AWSReservedSSO_*',
      TXS_ALLOW_PRIVILEGED: 'true',
      TXS_ALLOWED_HOST_PATHS: '/scratch/, /data',
      TXS_ALLOWED_DEVICES: '/dev/fuse',
      TXS_SAGEMAKER_INSTANCE_TYPES: 'ml.g5.xlarge,ml.p4d.24xlarge',
      TXS_STACK_NAME: 'TorchxServerless-prod',
      TXS_WORKSPACE_FETCH_IMAGE: '123456789012.dkr.ecr.us-east-1.amazonaws.com/aws-cli:2.31.23',
    });
    expect(config.workspaceFetchImage).toBe('123456789012.dkr.ecr.us-east-1.amazonaws.com/aws-cli:2.31.23');
    expect([...config.identity.admins]).toEqual([`arn:aws:iam::${A}:role/platform`, 'alice']);
    expect(config.hostAccess).toEqual({
      privileged: true,
      hostPathPrefixes: ['/scratch', '/data'],
      devices: ['/dev/fuse'],
    });
    expect(config.sageMakerInstanceTypes).toEqual(['ml.g5.xlarge', 'ml.p4d.24xlarge']);
    expect(config.stackTags).toEqual({ 'torchx-serverless:stack': 'TorchxServerless-prod' });
    expect(config.batchNamePrefix).toBe('TorchxServerless-prod_');
  });

  it("gives host access the environment leaves unset local mode's default, and what it sets its own value", () => {
    const all = { privileged: true, hostPathPrefixes: 'any', devices: 'any' } as const;
    expect(readDeploymentConfig({}, all).hostAccess).toEqual(all);
    expect(
      readDeploymentConfig({ TXS_ALLOW_PRIVILEGED: 'false', TXS_ALLOWED_DEVICES: '/dev/fuse' }, all)
        .hostAccess,
    ).toEqual({ privileged: false, hostPathPrefixes: 'any', devices: ['/dev/fuse'] });
  });

  it('fails naming the variable for a bad value, rather than running wider than configured', () => {
    expect(() => readDeploymentConfig({ TXS_ALLOW_PRIVILEGED: 'yes' })).toThrow(/TXS_ALLOW_PRIVILEGED/);
    expect(() => readDeploymentConfig({ TXS_WORKSPACE_FETCH_IMAGE: 'aws cli' })).toThrow(
      /TXS_WORKSPACE_FETCH_IMAGE/,
    );
    expect(() => readDeploymentConfig({ TXS_ALLOWED_HOST_PATHS: 'data' })).toThrow(/TXS_ALLOWED_HOST_PATHS/);
    expect(() => readDeploymentConfig({ TXS_ALLOWED_DEVICES: '*,/dev/fuse' })).toThrow(/TXS_ALLOWED_DEVICES/);
    expect(() => readDeploymentConfig({ TXS_ADMIN_PRINCIPALS: `arn:aws:iam::${A}:root` })).toThrow(
      /TXS_ADMIN_PRINCIPALS/,
    );
    expect(() => readDeploymentConfig({ TXS_SESSION_OWNER_ROLES: 'bad role' })).toThrow(
      /TXS_SESSION_OWNER_ROLES/,
    );
    expect(() => readDeploymentConfig({ TXS_SAGEMAKER_INSTANCE_TYPES: 'g5.xlarge' })).toThrow(
      /TXS_SAGEMAKER_INSTANCE_TYPES/,
    );
  });
});
