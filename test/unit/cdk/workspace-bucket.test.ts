/**
 * The workspace bucket: encrypted, never public, TLS only, expiring; what the functions may do with it and
 * what the job roles the construct knows may read, proven by evaluating the synthesized policies request by
 * request (test/helpers/iam-policy.ts), not only by their shape.
 */

import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TorchxServerlessPropsError } from '../../../cdk/constructs/prop-issues.js';
import { ENV } from '../../../functions/shared/env-names.js';
import { evaluate, type IamStatement } from '../../helpers/iam-policy.js';
import {
  buildStack,
  CONFIGURED,
  cfnFunctionOf,
  logicalIdOf,
  render,
  type Synthesized,
  statementsOf,
  synthesize,
} from './synth.js';

const BUCKET_ARN = 'arn:aws:s3:::txs-workspaces';
const SHA = 'ab'.repeat(32);
const ARCHIVE = `${BUCKET_ARN}/workspaces/0123456789abcdef0123456789abcdef/${SHA}.tar.gz`;
const JOB_ROLE = 'arn:aws:iam::123456789012:role/TrainingJobRole';
const SAGEMAKER_ROLE = 'arn:aws:iam::123456789012:role/SageMakerTraining';

let configured: Synthesized;
let bucketId: string;

beforeAll(() => {
  configured = synthesize(CONFIGURED);
  const bucket = configured.stack.txs.workspaceBucket;
  if (bucket === undefined) throw new Error('no workspace bucket');
  bucketId = logicalIdOf(bucket.node.defaultChild as never);
});

/** `${<bucket>.Arn}` as the bucket's ARN. */
const resolveBucket = (text: string) => text.replaceAll(`\${${bucketId}.Arn}`, BUCKET_ARN);

/** A function role's statements, the bucket's ARN resolved. */
function roleStatements(name: string): IamStatement[] {
  return statementsOf(configured, name).map((s) => ({
    Effect: 'Allow',
    Action: s.actions,
    Resource: s.resources.map(resolveBucket),
    ...(s.condition === undefined ? {} : { Condition: s.condition as IamStatement['Condition'] }),
  }));
}

interface PolicyStatementJson {
  Effect: 'Allow' | 'Deny';
  Principal: { AWS: string | string[] };
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string>>;
}

/** The bucket policy's statements. */
function bucketPolicy(): PolicyStatementJson[] {
  const policies = configured.template.findResources('AWS::S3::BucketPolicy');
  const [policy] = Object.values(policies) as {
    Properties: { PolicyDocument: { Statement: PolicyStatementJson[] } };
  }[];
  return policy?.Properties.PolicyDocument.Statement ?? [];
}

/** The bucket policy's Allow statements naming `principal`, the bucket's ARN resolved. */
function allowsFor(principal: string): IamStatement[] {
  return bucketPolicy()
    .filter((s) => s.Effect === 'Allow' && [s.Principal.AWS].flat().map(render).includes(principal))
    .map((s) => ({
      Effect: 'Allow',
      Action: s.Action,
      Resource: [s.Resource].flat().map((r) => resolveBucket(render(r))),
      ...(s.Condition === undefined ? {} : { Condition: s.Condition }),
    }));
}

describe('the workspace bucket', () => {
  it('is encrypted, blocks all public access, is owner-enforced and expires archives after 30 days', () => {
    configured.template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LifecycleConfiguration: {
        Rules: [
          {
            Id: 'ExpireWorkspaces',
            Prefix: 'workspaces/',
            Status: 'Enabled',
            ExpirationInDays: 30,
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          },
        ],
      },
    });
    configured.template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
  });

  it('refuses every request without TLS 1.2 or later', () => {
    const denies = bucketPolicy().filter((s) => s.Effect === 'Deny');
    expect(denies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        expect.objectContaining({ Action: 's3:*', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
      ]),
    );
    for (const deny of denies) expect(deny.Principal).toEqual({ AWS: '*' });
  });

  it('lets the Batch job roles and SageMaker execution roles read archives and list the archive prefix (SageMaker channels list), and nothing else', () => {
    for (const role of [JOB_ROLE, SAGEMAKER_ROLE]) {
      const statements = allowsFor(role);
      expect(evaluate(statements, { action: 's3:GetObject', resources: [ARCHIVE] })).toBe('Allow');
      expect(evaluate(statements, { action: 's3:GetObject', resources: [`${BUCKET_ARN}/other/x`] })).toBe(
        'ImplicitDeny',
      );
      expect(evaluate(statements, { action: 's3:PutObject', resources: [ARCHIVE] })).toBe('ImplicitDeny');
      expect(evaluate(statements, { action: 's3:ListBucket', resources: [BUCKET_ARN] })).toBe('ImplicitDeny');
      const list = (prefix: string) =>
        evaluate(statements, {
          action: 's3:ListBucket',
          resources: [BUCKET_ARN],
          context: { 's3:prefix': prefix },
        });
      expect(list(ARCHIVE.slice(`${BUCKET_ARN}/`.length))).toBe('Allow');
      expect(list('other/')).toBe('ImplicitDeny');
    }
  });

  it('gives the job roles no read when the stack knows none', () => {
    const bare = synthesize({});
    const policies = bare.template.findResources('AWS::S3::BucketPolicy');
    const statements = Object.values(policies).flatMap(
      (p) =>
        (p as { Properties: { PolicyDocument: { Statement: PolicyStatementJson[] } } }).Properties
          .PolicyDocument.Statement,
    );
    expect(statements.filter((s) => s.Effect === 'Allow')).toEqual([]);
  });

  it('hands the functions the bucket name and its expiry in days', () => {
    const resources = configured.template.toJSON().Resources as Record<
      string,
      { Properties: { Environment: { Variables: Record<string, unknown> } } }
    >;
    const env =
      resources[logicalIdOf(cfnFunctionOf(configured.stack, 'Workspaces'))]?.Properties.Environment.Variables;
    expect(env?.[ENV.workspaceBucket]).toEqual({ Ref: bucketId });
    expect(env?.[ENV.workspaceDays]).toBe('30');
  });

  it('takes another expiry in whole days, and refuses one that is not', () => {
    const week = synthesize({ workspaceExpiration: Duration.days(7) });
    week.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 7 })] },
    });
    expect(() => buildStack({ workspaceExpiration: Duration.hours(36) })).toThrow(TorchxServerlessPropsError);
    expect(() => buildStack({ workspaceExpiration: Duration.days(1) })).toThrow(/workspaceExpiration/);
  });

  it('is emptied before it is deleted with a DESTROY stack (CloudFormation deletes no bucket holding archives), never with RETAIN', () => {
    configured.template.resourceCountIs('Custom::S3AutoDeleteObjects', 0);
    const destroyed = synthesize({ ...CONFIGURED, tableRemovalPolicy: RemovalPolicy.DESTROY });
    destroyed.template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Delete' });
    destroyed.template.hasResourceProperties('Custom::S3AutoDeleteObjects', {
      BucketName: { Ref: bucketId },
    });
    // Only the emptying custom resource's own role may delete archives.
    const statements = Object.values(destroyed.template.findResources('AWS::S3::BucketPolicy')).flatMap(
      (p) =>
        (p as { Properties: { PolicyDocument: { Statement: PolicyStatementJson[] } } }).Properties
          .PolicyDocument.Statement,
    );
    const deleting = statements.filter((st) =>
      [st.Action].flat().some((a) => a.startsWith('s3:DeleteObject')),
    );
    expect(deleting.map((st) => render(st.Principal.AWS))).toEqual([
      expect.stringMatching(/^\$\{CustomS3AutoDeleteObjectsCustomResourceProviderRole[0-9A-F]+\.Arn\}$/),
    ]);
  });

  it('is not created for a stack with only the slurm scheduler', () => {
    const slurmOnly = synthesize({
      schedulers: ['slurm'],
      slurm: {
        restUrl: 'http://10.0.0.10:6820',
        user: 'torchx',
        jwtKeySecretArn: 'arn:aws:secretsmanager:us-west-2:123456789012:secret:slurm-jwt-AbCdEf',
      },
    });
    expect(slurmOnly.stack.txs.workspaceBucket).toBeUndefined();
    slurmOnly.template.resourceCountIs('AWS::S3::Bucket', 0);
  });
});

describe('what the functions may do with workspace archives', () => {
  it('lets Workspaces sign uploads (PutObject) and check for archives, under the archive prefix only', () => {
    const statements = roleStatements('Workspaces');
    expect(evaluate(statements, { action: 's3:PutObject', resources: [ARCHIVE] })).toBe('Allow');
    expect(evaluate(statements, { action: 's3:GetObject', resources: [ARCHIVE] })).toBe('Allow');
    expect(evaluate(statements, { action: 's3:ListBucket', resources: [BUCKET_ARN] })).toBe('Allow');
    expect(
      evaluate(statements, { action: 's3:PutObject', resources: [`${BUCKET_ARN}/elsewhere.tar.gz`] }),
    ).toBe('ImplicitDeny');
    expect(evaluate(statements, { action: 's3:DeleteObject', resources: [ARCHIVE] })).toBe('ImplicitDeny');
  });

  it('lets Run and Dryrun find archives but never write one', () => {
    for (const name of ['Run', 'Dryrun']) {
      const statements = roleStatements(name);
      expect(evaluate(statements, { action: 's3:GetObject', resources: [ARCHIVE] }), name).toBe('Allow');
      expect(evaluate(statements, { action: 's3:ListBucket', resources: [BUCKET_ARN] }), name).toBe('Allow');
      expect(evaluate(statements, { action: 's3:PutObject', resources: [ARCHIVE] }), name).toBe(
        'ImplicitDeny',
      );
    }
  });

  it('gives every other function no access to the bucket', () => {
    for (const name of [
      'Status',
      'List',
      'Cancel',
      'Delete',
      'Logs',
      'StateChange',
      'Reconciler',
      'Publisher',
    ]) {
      const statements = roleStatements(name);
      expect(evaluate(statements, { action: 's3:GetObject', resources: [ARCHIVE] }), name).toBe(
        'ImplicitDeny',
      );
    }
  });
});
