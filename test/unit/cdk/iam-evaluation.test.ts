/**
 * What the Run role really allows with AWS Batch: requests evaluated against the policy synthesized from the
 * stack (test/helpers/iam-policy.ts), not only the template's shape.
 *
 * The request contexts carry the keys AWS populates (Service Authorization Reference, AWS Batch; Batch user
 * guide, IAM policy examples):
 * - RegisterJobDefinition: `aws:RequestTag/*`, `aws:TagKeys` for the request, and per container (Batch
 *   "evaluates condition keys on each container", a multi-node definition's node ranges included):
 *   `batch:Privileged`, `batch:Image`, `batch:User`, … for an ECS container (`containerProperties`, a node
 *   range's `container`, an `ecsProperties` task container), `batch:EKSPrivileged`, `batch:EKSImage`, … for an
 *   EKS container (`eksProperties.podProperties.containers[].securityContext`).
 * - SubmitJob: authorized on the job queue, the job definition (or its revision) and the new job; request
 *   tags. `batch:ShareIdentifier` is a job's key, not a definition's.
 * - iam:PassRole: the role ARN and `iam:PassedToService`.
 */
import type { CfnResource } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchNamePrefix } from '../../../functions/shared/env-names.js';
import { AwsBatchTranslator } from '../../../lib/schedulers/aws-batch/translator.js';
import { makeAppDef, makeRole, namedResource } from '../../../lib/specs/index.js';
import { evaluate, type IamContext, type IamStatement } from '../../helpers/iam-policy.js';
import { CONFIGURED, logicalIdOf, render, type Synthesized, synthesize } from './synth.js';

const STACK = 'TorchxServerless-test';
const PREFIX = batchNamePrefix(STACK);
const ACCOUNT = '123456789012';
const REGION = 'us-east-1';
const arn = (resource: string) => `arn:aws:batch:${REGION}:${ACCOUNT}:${resource}`;
const STACK_TAGS: IamContext = {
  'aws:RequestTag/torchx-serverless:stack': STACK,
  'aws:TagKeys': ['torchx.pytorch.org/version', 'torchx-serverless:stack'],
};
const ECS = (privileged: boolean): IamContext => ({
  'batch:Privileged': String(privileged),
  'batch:Image': '123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1',
});
const EKS = (privileged: boolean): IamContext => ({
  'batch:EKSPrivileged': String(privileged),
  'batch:EKSImage': 'public.ecr.aws/train:1',
  'batch:EKSNamespace': 'batch',
});
const OWN_DEFINITION = arn(`job-definition/${PREFIX}train-3f2a9c0d11be`);
const GPU_QUEUE = arn('job-queue/gpu-queue');
const JOB = arn('job/9b979cce-9da0-446d-90e2-ffa16d52af68');

/** The Run role's policy, pseudo parameters resolved to one account and Region. */
function runPolicy(s: Synthesized): IamStatement[] {
  const fn = s.stack.txs.functions.Run;
  const policy = fn?.role?.node.tryFindChild('DefaultPolicy')?.node.defaultChild as CfnResource;
  const resources = s.template.toJSON().Resources as Record<string, { Properties: unknown }>;
  const properties = resources[logicalIdOf(policy)]?.Properties as
    | { PolicyDocument: { Statement: (IamStatement & { Resource: unknown })[] } }
    | undefined;
  if (properties === undefined) throw new Error('the Run role has no default policy');
  const { PolicyDocument } = properties;
  const resolve = (value: unknown) =>
    render(value)
      .replaceAll('${AWS::Partition}', 'aws')
      .replaceAll('${AWS::Region}', REGION)
      .replaceAll('${AWS::AccountId}', ACCOUNT);
  return PolicyDocument.Statement.map((statement) => ({
    ...statement,
    Resource: (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).map(resolve),
  }));
}

const register = (name: string, containers: IamContext[], context: IamContext = STACK_TAGS) => ({
  action: 'batch:RegisterJobDefinition',
  resources: [arn(`job-definition/${name}`)],
  context,
  containers,
});
/**
 * SubmitJob in both forms AWS documents: the user guide's examples authorize the queue and the definition;
 * the Service Authorization Reference adds the new job as a required resource.
 */
const submitForms = (definition: string, queue = GPU_QUEUE, context: IamContext = STACK_TAGS) => [
  { action: 'batch:SubmitJob', resources: [queue, definition], context },
  { action: 'batch:SubmitJob', resources: [queue, definition, JOB], context },
];
const submitDecisions = (policy: IamStatement[], definition: string, queue?: string, context?: IamContext) =>
  submitForms(definition, queue, context).map((request) => evaluate(policy, request));

let denied: IamStatement[];
let allowed: IamStatement[];

beforeAll(() => {
  denied = runPolicy(synthesize(CONFIGURED));
  allowed = runPolicy(synthesize({ ...CONFIGURED, hostAccess: { privileged: true } }));
});

describe('Run role: RegisterJobDefinition', () => {
  const name = `${PREFIX}train-3f2a9c0d11be`;

  it('allows the stack-prefixed, stack-tagged multi-node definition with no privileged container', () => {
    expect(evaluate(denied, register(name, [ECS(false), ECS(false)]))).toBe('Allow');
  });

  it('refuses a privileged single-node container (containerProperties)', () => {
    expect(evaluate(denied, register(name, [ECS(true)]))).not.toBe('Allow');
  });

  it('refuses a multi-node definition when one node range is privileged', () => {
    expect(evaluate(denied, register(name, [ECS(false), ECS(true)]))).not.toBe('Allow');
  });

  it('refuses an ecsProperties task with one privileged container', () => {
    expect(evaluate(denied, register(name, [ECS(false), ECS(true), ECS(false)]))).not.toBe('Allow');
  });

  it('refuses eksProperties with a privileged container, and EKS definitions at all', () => {
    expect(evaluate(denied, register(name, [EKS(true)]))).not.toBe('Allow');
    expect(evaluate(denied, register(name, [EKS(false)]))).not.toBe('Allow');
    expect(evaluate(allowed, register(name, [EKS(false)]))).not.toBe('Allow');
  });

  it('refuses a definition outside the stack prefix, or without the stack tag', () => {
    expect(evaluate(denied, register('train-3f2a9c0d11be', [ECS(false)]))).not.toBe('Allow');
    expect(evaluate(denied, register(`TorchxServerless-test2_train`, [ECS(false)]))).not.toBe('Allow');
    expect(evaluate(denied, register(name, [ECS(false)], {}))).not.toBe('Allow');
    expect(
      evaluate(denied, register(name, [ECS(false)], { 'aws:RequestTag/torchx-serverless:stack': 'other' })),
    ).not.toBe('Allow');
  });

  it('allows privileged ECS containers only when the stack allows them', () => {
    expect(evaluate(allowed, register(name, [ECS(false), ECS(true)]))).toBe('Allow');
  });
});

describe('Run role: SubmitJob and TagResource', () => {
  it("allows a job from the stack's definition (name or revision) to a configured queue", () => {
    expect(submitDecisions(denied, OWN_DEFINITION)).toEqual(['Allow', 'Allow']);
    expect(submitDecisions(denied, `${OWN_DEFINITION}:7`)).toEqual(['Allow', 'Allow']);
    const cpuQueue = 'arn:aws:batch:us-west-2:123456789012:job-queue/cpu-queue';
    expect(submitDecisions(denied, OWN_DEFINITION, cpuQueue)).toEqual(['Allow', 'Allow']);
  });

  it('refuses a definition the stack did not register (a privileged one registered by someone else)', () => {
    const foreign = arn('job-definition/privileged-by-someone:3');
    expect(submitDecisions(denied, foreign)).toEqual(['ImplicitDeny', 'ImplicitDeny']);
    expect(submitDecisions(allowed, foreign)).toEqual(['ImplicitDeny', 'ImplicitDeny']);
  });

  it('refuses a queue that is not configured, and a job without the stack tag', () => {
    const other = arn('job-queue/other-queue');
    expect(submitDecisions(denied, OWN_DEFINITION, other)).toEqual(['ImplicitDeny', 'ImplicitDeny']);
    expect(submitDecisions(denied, OWN_DEFINITION, GPU_QUEUE, {})).toEqual(['ImplicitDeny', 'ImplicitDeny']);
  });

  it("tags only the stack's definitions and new jobs", () => {
    const tag = (resource: string) => ({
      action: 'batch:TagResource',
      resources: [resource],
      context: STACK_TAGS,
    });
    expect(evaluate(denied, tag(OWN_DEFINITION))).toBe('Allow');
    expect(evaluate(denied, tag(JOB))).toBe('Allow');
    expect(evaluate(denied, tag(arn('job-definition/someone-else:1')))).not.toBe('Allow');
    expect(evaluate(denied, tag(GPU_QUEUE))).not.toBe('Allow');
  });
});

describe('Run role: iam:PassRole', () => {
  const pass = (role: string, service = 'batch.amazonaws.com') => ({
    action: 'iam:PassRole',
    resources: [role],
    context: { 'iam:PassedToService': service },
  });

  it('passes a configured job role to Batch only', () => {
    expect(evaluate(denied, pass('arn:aws:iam::123456789012:role/TrainingJobRole'))).toBe('Allow');
    expect(
      evaluate(denied, pass('arn:aws:iam::123456789012:role/TrainingJobRole', 'ec2.amazonaws.com')),
    ).not.toBe('Allow');
  });

  it('refuses a role that is not configured', () => {
    expect(evaluate(denied, pass('arn:aws:iam::123456789012:role/AdminRole'))).not.toBe('Allow');
  });
});

describe('Run role and the aws_batch translation under the stack', () => {
  const translator = new AwsBatchTranslator(
    { sessionName: 'torchx' },
    {
      defaultUser: 'alice',
      stackTags: { 'torchx-serverless:stack': STACK },
      namePrefix: PREFIX,
    },
  );
  const app = (args: string[]) =>
    makeAppDef({
      name: 'train',
      roles: [1, 2].map((i) =>
        makeRole({
          name: `r${i}`,
          image: 'alpine',
          entrypoint: 'sh',
          args,
          resource: namedResource('aws_t3.medium'),
        }),
      ),
    });

  it('allows registering and submitting exactly what the translator sends (shared and per-run definitions)', () => {
    for (const args of [
      ['-c', 'true'],
      ['-c', 'echo ${app_id}'],
    ]) {
      const { request } = translator.submitDryrun(app(args), { queue: 'gpu-queue' });
      const definition = request.registerJobDefinition;
      const containers = (definition.nodeProperties?.nodeRangeProperties ?? []).map((range) =>
        ECS(range.container?.privileged === true),
      );
      const context: IamContext = {
        'aws:RequestTag/torchx-serverless:stack': definition.tags?.['torchx-serverless:stack'] ?? '',
      };
      expect(containers).toHaveLength(2);
      expect(evaluate(denied, register(definition.jobDefinitionName ?? '', containers, context))).toBe(
        'Allow',
      );
      const revision = arn(`job-definition/${request.submitJob.jobDefinition}:1`);
      expect(submitDecisions(denied, revision)).toEqual(['Allow', 'Allow']);
    }
  });
});

describe('Run role and an aws_batch job in a workspace (ecsProperties tasks)', () => {
  const JOB_ROLE = 'arn:aws:iam::123456789012:role/TrainingJobRole';
  const translator = new AwsBatchTranslator(
    { sessionName: 'torchx' },
    { defaultUser: 'alice', stackTags: { 'torchx-serverless:stack': STACK }, namePrefix: PREFIX },
  );
  const workspace = {
    sha256: 'a'.repeat(64),
    size: 10,
    fileCount: 1,
    archive: `s3://txs-ws/alice/${'a'.repeat(64)}.tar.gz`,
  };
  const app = makeAppDef({
    name: 'train',
    roles: [1, 2].map((i) =>
      makeRole({
        name: `r${i}`,
        image: 'alpine',
        entrypoint: 'sh',
        args: ['-c', 'true'],
        numReplicas: i,
        resource: namedResource('aws_t3.medium'),
      }),
    ),
  });
  /** What Batch evaluates: every container of every node range's task; `privileged` absent or as sent. */
  const requestOf = (privileged: boolean, absentAs?: 'false') => {
    const { request } = translator.submitDryrun(
      app,
      { queue: 'gpu-queue', job_role_arn: JOB_ROLE, privileged },
      workspace,
    );
    const definition = request.registerJobDefinition;
    const tasks = (definition.nodeProperties?.nodeRangeProperties ?? []).flatMap(
      (range) => range.ecsProperties?.taskProperties ?? [],
    );
    const containers = tasks.flatMap((task) => task.containers ?? []);
    const contexts = containers.map((container): IamContext => {
      const value = container.privileged === undefined ? absentAs : String(container.privileged);
      return {
        'batch:Image': container.image ?? '',
        ...(value === undefined ? {} : { 'batch:Privileged': value }),
      };
    });
    const context: IamContext = { 'aws:RequestTag/torchx-serverless:stack': STACK };
    return {
      request,
      tasks,
      contexts,
      register: register(definition.jobDefinitionName ?? '', contexts, context),
    };
  };

  it('allows registering and submitting the workspace definition, whether Batch fills the fetch container in or not', () => {
    for (const absentAs of [undefined, 'false'] as const) {
      const { request, contexts, register: registration } = requestOf(false, absentAs);
      expect(contexts).toHaveLength(4);
      expect(evaluate(denied, registration)).toBe('Allow');
      const revision = arn(`job-definition/${request.submitJob.jobDefinition}:1`);
      expect(submitDecisions(denied, revision)).toEqual(['Allow', 'Allow']);
    }
  });

  it('still refuses it with cfg.privileged unless the stack allows privileged containers', () => {
    expect(evaluate(denied, requestOf(true).register)).not.toBe('Allow');
    expect(evaluate(allowed, requestOf(true).register)).toBe('Allow');
  });

  it("passes the task's role (the job role the fetch container reads S3 with) to Batch", () => {
    const { tasks } = requestOf(false);
    expect(tasks.map((task) => task.taskRoleArn)).toEqual([JOB_ROLE, JOB_ROLE]);
    const pass = {
      action: 'iam:PassRole',
      resources: [JOB_ROLE],
      context: { 'iam:PassedToService': 'batch.amazonaws.com' },
    };
    expect(evaluate(denied, pass)).toBe('Allow');
  });
});

describe('IAM policy evaluator (the rules the tests above rely on)', () => {
  const allow = (Condition?: IamStatement['Condition']): IamStatement => ({
    Effect: 'Allow',
    Action: 'batch:RegisterJobDefinition',
    Resource: arn('job-definition/a_*'),
    ...(Condition === undefined ? {} : { Condition }),
  });
  const request = (containers: IamContext[], name = 'a_x') => register(name, containers, {});

  it('denies what no statement allows, and lets an explicit Deny win over an Allow', () => {
    expect(evaluate([allow()], request([{}], 'b_x'))).toBe('ImplicitDeny');
    const deny: IamStatement = { Effect: 'Deny', Action: 'batch:*', Resource: '*' };
    expect(evaluate([allow(), deny], request([{}]))).toBe('ExplicitDeny');
  });

  it('matches a missing key with IfExists and Null true only, and keys case-insensitively', () => {
    expect(evaluate([allow({ BoolIfExists: { 'batch:Privileged': 'false' } })], request([{}]))).toBe('Allow');
    expect(evaluate([allow({ Bool: { 'batch:Privileged': 'false' } })], request([{}]))).toBe('ImplicitDeny');
    expect(evaluate([allow({ Null: { 'batch:EKSImage': 'true' } })], request([EKS(false)]))).toBe(
      'ImplicitDeny',
    );
    expect(
      evaluate(
        [allow({ Bool: { 'batch:privileged': 'false' } })],
        request([{ 'BATCH:Privileged': 'false' }]),
      ),
    ).toBe('Allow');
  });

  it('ANDs keys within an operator and ORs the values of a key', () => {
    const both = allow({ StringEquals: { 'batch:Image': ['x', 'y'], 'batch:User': 'nobody' } });
    expect(evaluate([both], request([{ 'batch:Image': 'y', 'batch:User': 'nobody' }]))).toBe('Allow');
    expect(evaluate([both], request([{ 'batch:Image': 'y', 'batch:User': 'root' }]))).toBe('ImplicitDeny');
  });

  it('allows a request only when every container and every resource is allowed', () => {
    const policy = [allow({ BoolIfExists: { 'batch:Privileged': 'false' } })];
    expect(evaluate(policy, request([ECS(false), ECS(true)]))).toBe('ImplicitDeny');
    const twoResources = { ...request([{}]), resources: [arn('job-definition/a_x'), arn('job-queue/q')] };
    expect(evaluate(policy, twoResources)).toBe('ImplicitDeny');
  });

  it('refuses to evaluate an operator it does not implement', () => {
    expect(() =>
      evaluate([allow({ NumericLessThan: { 'batch:EKSRunAsUser': '1000' } })], request([{}])),
    ).toThrow(/NumericLessThan/);
  });
});
