/**
 * The security settings in the synthesized template: Batch only with queues, the stack tag in every launch
 * and in every stop/cancel/deregister condition, batch:Privileged and batch:EKSPrivileged, sagemaker:InstanceTypes, admins and owners
 * reaching the functions, reserved concurrency, and the account-wide API Gateway role off by default.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { readDeployConfig } from '../../../cdk/config.js';
import { TorchxServerlessPropsError } from '../../../cdk/constructs/prop-issues.js';
import { validateProps } from '../../../cdk/constructs/validate-props.js';
import { EVENT_FUNCTIONS, ROUTES } from '../../../functions/routes.js';
import { actionsOf, CONFIGURED, cfnFunctionOf, type Synthesized, statementsOf, synthesize } from './synth.js';

const STACK = 'TorchxServerless-test';
const REQUEST_TAG = { StringEquals: { 'aws:RequestTag/torchx-serverless:stack': STACK } };
const RESOURCE_TAG = { StringEquals: { 'aws:ResourceTag/torchx-serverless:stack': STACK } };
const NOT_PRIVILEGED = { BoolIfExists: { 'batch:Privileged': 'false', 'batch:EKSPrivileged': 'false' } };
const NO_EKS = { Null: { 'batch:EKSImage': 'true' } };

let bare: Synthesized;
let configured: Synthesized;
let opened: Synthesized;

beforeAll(() => {
  bare = synthesize();
  configured = synthesize(CONFIGURED);
  opened = synthesize({
    ...CONFIGURED,
    adminPrincipals: ['arn:aws:iam::123456789012:role/PlatformAdmin'],
    perSessionOwnerRoles: ['AWSReservedSSO_*'],
    hostAccess: { privileged: true, hostPathPrefixes: ['/scratch'], devices: ['/dev/fuse'] },
    sageMakerInstanceTypes: ['ml.g5.xlarge', 'ml.g5.12xlarge'],
    workspaceFetchImage: '123456789012.dkr.ecr.us-east-1.amazonaws.com/aws-cli:2.31.23',
    reservedConcurrency: { Logs: 5, Run: 10 },
    apiGatewayCloudWatchRole: true,
  });
});

const conditionsFor = (s: Synthesized, name: string, action: string) =>
  statementsOf(s, name)
    .filter((statement) => statement.actions.includes(action))
    .map((statement) => statement.condition);
const envOf = (s: Synthesized, name: string) =>
  (
    s.template.toJSON().Resources[s.stack.getLogicalId(cfnFunctionOf(s.stack, name))].Properties as {
      Environment: { Variables: Record<string, string> };
    }
  ).Environment.Variables;

describe('TorchxServerless Batch queues', () => {
  it('fails synth naming batchJobQueues when aws_batch is asked for without queues', () => {
    try {
      validateProps({ schedulers: ['aws_batch'] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TorchxServerlessPropsError);
      expect((error as TorchxServerlessPropsError).issues.map((i) => i.path)).toEqual(['batchJobQueues']);
    }
  });

  it('deploys without aws_batch, and grants no Batch permission at all, when no queues are configured', () => {
    for (const name of Object.keys(bare.stack.txs.functions)) {
      expect(actionsOf(bare, name).filter((a) => a.startsWith('batch:'))).toEqual([]);
    }
    expect(envOf(bare, 'Run').TXS_SCHEDULERS).toBe('aws_sagemaker');
  });
});

describe('TorchxServerless stack tag', () => {
  it('passes the stack name to the functions', () => {
    expect(envOf(configured, 'Run').TXS_STACK_NAME).toBe(STACK);
  });

  it('requires the stack tag on every launch (job definitions, jobs, training jobs, tags)', () => {
    for (const action of [
      'batch:SubmitJob',
      'batch:TagResource',
      'sagemaker:CreateTrainingJob',
      'sagemaker:AddTags',
    ]) {
      expect(conditionsFor(configured, 'Run', action), action).toEqual([REQUEST_TAG]);
    }
    expect(conditionsFor(configured, 'Run', 'batch:RegisterJobDefinition')).toEqual([
      { ...REQUEST_TAG, ...NO_EKS, ...NOT_PRIVILEGED },
    ]);
  });

  it('lets Cancel and Delete stop, cancel and deregister only what carries the stack tag', () => {
    for (const name of ['Cancel', 'Delete']) {
      for (const action of ['batch:CancelJob', 'batch:TerminateJob', 'sagemaker:StopTrainingJob']) {
        expect(conditionsFor(configured, name, action), `${name} ${action}`).toEqual([RESOURCE_TAG]);
      }
    }
    expect(conditionsFor(configured, 'Delete', 'batch:DeregisterJobDefinition')).toEqual([RESOURCE_TAG]);
  });

  it('leaves the reconciler read-only: no stop, cancel or deregister', () => {
    const writes = actionsOf(configured, 'Reconciler').filter((a) =>
      /^(batch|sagemaker):(Cancel|Terminate|Deregister|Stop|Submit|Create|Register)/.test(a),
    );
    expect(writes).toEqual([]);
  });
});

describe('TorchxServerless host access and instance types in IAM', () => {
  it('drops the privileged conditions only when privileged containers are allowed (EKS stays refused)', () => {
    expect(conditionsFor(opened, 'Run', 'batch:RegisterJobDefinition')).toEqual([
      { ...REQUEST_TAG, ...NO_EKS },
    ]);
  });

  it('limits CreateTrainingJob to the allowed instance types with sagemaker:InstanceTypes', () => {
    expect(conditionsFor(opened, 'Run', 'sagemaker:CreateTrainingJob')).toEqual([
      {
        ...REQUEST_TAG,
        'ForAllValues:StringEquals': { 'sagemaker:InstanceTypes': ['ml.g5.xlarge', 'ml.g5.12xlarge'] },
      },
    ]);
  });

  it('passes admins, per-session roles, host access and instance types to the functions', () => {
    const env = envOf(opened, 'List');
    expect(env).toMatchObject({
      TXS_ADMIN_PRINCIPALS: 'arn:aws:iam::123456789012:role/PlatformAdmin',
      TXS_SESSION_OWNER_ROLES: 'AWSReservedSSO_*',
      TXS_ALLOW_PRIVILEGED: 'true',
      TXS_ALLOWED_HOST_PATHS: '/scratch',
      TXS_ALLOWED_DEVICES: '/dev/fuse',
      TXS_SAGEMAKER_INSTANCE_TYPES: 'ml.g5.xlarge,ml.g5.12xlarge',
      TXS_WORKSPACE_FETCH_IMAGE: '123456789012.dkr.ecr.us-east-1.amazonaws.com/aws-cli:2.31.23',
    });
    for (const key of [
      'TXS_WORKSPACE_FETCH_IMAGE',
      'TXS_ADMIN_PRINCIPALS',
      'TXS_ALLOW_PRIVILEGED',
      'TXS_ALLOWED_HOST_PATHS',
      'TXS_ALLOWED_DEVICES',
    ]) {
      expect(envOf(configured, 'List'), key).not.toHaveProperty(key);
    }
  });

  it('refuses bad security props at synth, naming each', () => {
    try {
      validateProps({
        adminPrincipals: ['arn:aws:iam::123456789012:root'],
        hostAccess: { hostPathPrefixes: ['data'], devices: ['*', '/dev/fuse'] },
        sageMakerInstanceTypes: ['g5.xlarge'],
        workspaceFetchImage: 'aws cli',
        reservedConcurrency: { Nope: 1, Run: 0 },
      });
      expect.unreachable();
    } catch (error) {
      expect((error as TorchxServerlessPropsError).issues.map((i) => i.path).sort()).toEqual(
        [
          'adminPrincipals.0',
          'hostAccess.hostPathPrefixes.0',
          'hostAccess.devices',
          'sageMakerInstanceTypes.0',
          'workspaceFetchImage',
          'reservedConcurrency.Nope',
          'reservedConcurrency.Run',
        ].sort(),
      );
    }
  });
});

describe('TorchxServerless reserved concurrency and API logging', () => {
  const reservedOf = (s: Synthesized, name: string) =>
    (
      s.template.toJSON().Resources[s.stack.getLogicalId(cfnFunctionOf(s.stack, name))].Properties as {
        ReservedConcurrentExecutions?: number;
      }
    ).ReservedConcurrentExecutions;

  it('reserves nothing by default, so the stack deploys in an account with a quota of 10', () => {
    for (const name of Object.keys(configured.stack.txs.functions))
      expect(reservedOf(configured, name)).toBeUndefined();
  });

  it('reserves per function name, or the same number for every API function', () => {
    expect(reservedOf(opened, 'Logs')).toBe(5);
    expect(reservedOf(opened, 'Run')).toBe(10);
    expect(reservedOf(opened, 'List')).toBeUndefined();
    const capped = synthesize({ reservedConcurrency: 20 });
    for (const route of ROUTES) expect(reservedOf(capped, route.name), route.name).toBe(20);
    expect(reservedOf(capped, EVENT_FUNCTIONS.stateChange.name)).toBeUndefined();
    expect(reservedOf(capped, EVENT_FUNCTIONS.reconciler.name)).toBeUndefined();
  });

  it('creates the account-wide API Gateway role, and logs, only when asked', () => {
    bare.template.resourceCountIs('AWS::ApiGateway::Account', 0);
    opened.template.resourceCountIs('AWS::ApiGateway::Account', 1);
    opened.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [Match.objectLike({ LoggingLevel: 'ERROR' })],
    });
  });
});

describe('readDeployConfig security keys', () => {
  it('reads every security setting from context', () => {
    const { props } = readDeployConfig(
      (key) =>
        ({
          adminPrincipals: 'arn:aws:iam::123456789012:role/A, arn:aws:iam::123456789012:user/b',
          perSessionOwnerRoles: 'AWSReservedSSO_*',
          allowPrivileged: 'true',
          hostPathPrefixes: '/scratch',
          devices: '/dev/fuse',
          sageMakerInstanceTypes: 'ml.g5.xlarge',
          reservedConcurrency: '15',
          apiLogging: 'true',
        })[key],
    );
    expect(props).toMatchObject({
      adminPrincipals: ['arn:aws:iam::123456789012:role/A', 'arn:aws:iam::123456789012:user/b'],
      perSessionOwnerRoles: ['AWSReservedSSO_*'],
      hostAccess: { privileged: true, hostPathPrefixes: ['/scratch'], devices: ['/dev/fuse'] },
      sageMakerInstanceTypes: ['ml.g5.xlarge'],
      reservedConcurrency: 15,
      apiLogging: true,
    });
  });

  it('refuses a flag that is not true or false', () => {
    expect(() => readDeployConfig((key) => (key === 'allowPrivileged' ? 'yes' : undefined))).toThrow(
      /allowPrivileged/,
    );
  });
});
