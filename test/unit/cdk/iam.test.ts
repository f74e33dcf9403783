import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_INDEXES } from '../../../lib/store/table.js';
import {
  actionsOf,
  CONFIGURED,
  logicalIdOf,
  resourcesFor,
  type Synthesized,
  stackArn,
  statementsOf,
  synthesize,
} from './synth.js';

/** Every function may write its own logs and send traces. */
const BASE = [
  'logs:CreateLogStream',
  'logs:PutLogEvents',
  'xray:PutTelemetryRecords',
  'xray:PutTraceSegments',
];

/** What each function calls (the spec this stack is checked against), Batch and SageMaker both enabled. */
const EXPECTED_ACTIONS: Record<string, string[]> = {
  Schedulers: [],
  Components: [],
  // Workspace archives: whether one is uploaded (HeadObject needs GetObject, and ListBucket for a 404).
  Dryrun: ['s3:GetObject', 's3:ListBucket'],
  // Signs upload URLs: the URL's PUT is authorized as the function's s3:PutObject.
  Workspaces: ['s3:GetObject', 's3:ListBucket', 's3:PutObject'],
  Run: [
    'dynamodb:DeleteItem',
    'dynamodb:GetItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'batch:DescribeJobDefinitions',
    'batch:RegisterJobDefinition',
    'batch:SubmitJob',
    'batch:TagResource',
    'sagemaker:AddTags',
    'sagemaker:CreateTrainingJob',
    'sagemaker:DescribeTrainingJob',
    's3:GetObject',
    's3:ListBucket',
  ],
  List: ['dynamodb:Query'],
  Counts: ['dynamodb:Query'],
  Status: [
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    'batch:DescribeJobs',
    'batch:ListJobs',
    'sagemaker:DescribeTrainingJob',
  ],
  Cancel: [
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    'batch:CancelJob',
    'batch:DescribeJobs',
    'batch:ListJobs',
    'batch:TerminateJob',
    'sagemaker:DescribeTrainingJob',
    'sagemaker:StopTrainingJob',
  ],
  Delete: [
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    'batch:CancelJob',
    'batch:DeregisterJobDefinition',
    'batch:DescribeJobs',
    'batch:ListJobs',
    'batch:TerminateJob',
    'sagemaker:DescribeTrainingJob',
    'sagemaker:StopTrainingJob',
  ],
  Logs: [
    'dynamodb:GetItem',
    'batch:DescribeJobs',
    'batch:ListJobs',
    'sagemaker:DescribeTrainingJob',
    'logs:DescribeLogStreams',
    'logs:GetLogEvents',
  ],
  StateChange: [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:UpdateItem',
    'sqs:GetQueueAttributes',
    'sqs:GetQueueUrl',
    'sqs:SendMessage',
  ],
  Reconciler: [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:UpdateItem',
    'batch:DescribeJobs',
    'batch:ListJobs',
    'sagemaker:DescribeTrainingJob',
  ],
  // The outbox publisher: reads the table's stream, puts events on the bus, sends what fails to its queue.
  Publisher: [
    'dynamodb:DescribeStream',
    'dynamodb:GetRecords',
    'dynamodb:GetShardIterator',
    'dynamodb:ListStreams',
    'events:PutEvents',
    'sqs:GetQueueAttributes',
    'sqs:GetQueueUrl',
    'sqs:SendMessage',
  ],
};

/** The only actions AWS requires `Resource: *` for, among those we call. */
const STAR_ONLY_ACTIONS = new Set([
  'xray:PutTelemetryRecords',
  'xray:PutTraceSegments',
  'batch:ListJobs',
  'batch:DescribeJobs',
  'batch:DescribeJobDefinitions',
  'dynamodb:ListStreams',
]);

/** Reading the table's stream (the outbox publisher), granted on the stream ARN. */
const STREAM_ACTIONS = new Set([
  'dynamodb:DescribeStream',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
  'dynamodb:ListStreams',
]);

const NAMES = Object.keys(EXPECTED_ACTIONS);

/** Every scheduler enabled with the least configuration: one Batch queue. */
let defaults: Synthesized;
let configured: Synthesized;
let batchOnly: Synthesized;

beforeAll(() => {
  defaults = synthesize({ batchJobQueues: ['gpu-queue'] });
  configured = synthesize(CONFIGURED);
  batchOnly = synthesize({
    schedulers: ['aws_batch'],
    batchJobQueues: ['gpu-queue'],
    jobLogGroupNames: ['/teams/ml/batch'],
  });
});

const tableArn = (s: Synthesized) => `\${${logicalIdOf(s.stack.txs.table.node.defaultChild as never)}.Arn}`;

describe('TorchxServerless least privilege', () => {
  it.each(NAMES)('lets %s call exactly what it needs', (name) => {
    expect(actionsOf(defaults, name)).toEqual([...BASE, ...(EXPECTED_ACTIONS[name] ?? [])].sort());
  });

  it.each(NAMES)('gives %s "*" only for actions that support no resource-level permissions', (name) => {
    for (const statement of statementsOf(configured, name)) {
      if (!statement.resources.includes('*')) continue;
      for (const action of statement.actions) expect(STAR_ONLY_ACTIONS, action).toContain(action);
    }
  });

  it.each(NAMES)('lets %s write only its own log group', (name) => {
    const own = `\${${logicalIdOf(defaults.stack.txs.functions[name]?.logGroup.node.defaultChild as never)}.Arn}`;
    expect(resourcesFor(defaults, name, 'logs:PutLogEvents')).toEqual([own]);
    expect(resourcesFor(defaults, name, 'logs:CreateLogStream')).toEqual([own]);
  });

  it('gives the functions that only read metadata (schedulers, components, dryrun, workspaces) no table access', () => {
    for (const name of ['Schedulers', 'Components', 'Dryrun', 'Workspaces']) {
      expect(actionsOf(configured, name).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
    }
    for (const name of ['Schedulers', 'Components']) {
      expect(actionsOf(configured, name).filter((a) => !BASE.includes(a))).toEqual([]);
    }
  });

  it('grants item actions on the table only, and each Query on exactly one index', () => {
    for (const name of NAMES) {
      for (const statement of statementsOf(defaults, name)) {
        const items = statement.actions.filter(
          (a) => a.startsWith('dynamodb:') && a !== 'dynamodb:Query' && !STREAM_ACTIONS.has(a),
        );
        if (items.length > 0) expect(statement.resources).toEqual([tableArn(defaults)]);
      }
    }
    for (const name of ['List', 'Counts']) {
      expect(resourcesFor(defaults, name, 'dynamodb:Query')).toEqual([
        `${tableArn(defaults)}/index/${TABLE_INDEXES.byCreated}`,
        `${tableArn(defaults)}/index/${TABLE_INDEXES.byOwner}`,
      ]);
    }
    expect(resourcesFor(defaults, 'StateChange', 'dynamodb:Query').sort()).toEqual(
      [
        `${tableArn(defaults)}/index/${TABLE_INDEXES.byNativeName}`,
        `${tableArn(defaults)}/index/${TABLE_INDEXES.byActive}`,
      ].sort(),
    );
    expect(resourcesFor(defaults, 'Reconciler', 'dynamodb:Query')).toEqual([
      `${tableArn(defaults)}/index/${TABLE_INDEXES.byActive}`,
    ]);
  });

  it("lets only the outbox publisher read the table's stream, on the stream ARN", () => {
    const streamArn = `\${${logicalIdOf(defaults.stack.txs.table.node.defaultChild as never)}.StreamArn}`;
    expect(resourcesFor(defaults, 'Publisher', 'dynamodb:GetRecords')).toEqual([streamArn]);
    for (const name of NAMES.filter((n) => n !== 'Publisher')) {
      expect(actionsOf(defaults, name).filter((a) => STREAM_ACTIONS.has(a))).toEqual([]);
    }
  });

  it("lets only the outbox publisher put events, and only on the stack's own bus", () => {
    const bus = `\${${logicalIdOf(defaults.stack.txs.eventBus.node.defaultChild as never)}.Arn}`;
    expect(resourcesFor(defaults, 'Publisher', 'events:PutEvents')).toEqual([bus]);
    for (const name of NAMES.filter((n) => n !== 'Publisher')) {
      expect(actionsOf(defaults, name)).not.toContain('events:PutEvents');
    }
  });
});

describe('TorchxServerless iam:PassRole', () => {
  it('is granted to Run only, on exactly the configured roles, each passed only to its service', () => {
    for (const name of NAMES.filter((n) => n !== 'Run')) {
      expect(actionsOf(configured, name)).not.toContain('iam:PassRole');
    }
    const passRole = statementsOf(configured, 'Run')
      .filter((s) => s.actions.includes('iam:PassRole'))
      .map((s) => ({ ...s, resources: [...s.resources].sort() }));
    expect(passRole).toEqual([
      {
        actions: ['iam:PassRole'],
        resources: [...(CONFIGURED.batchJobRoleArns ?? [])].sort(),
        condition: { StringEquals: { 'iam:PassedToService': 'batch.amazonaws.com' } },
      },
      {
        actions: ['iam:PassRole'],
        resources: CONFIGURED.sageMakerExecutionRoleArns,
        condition: { StringEquals: { 'iam:PassedToService': 'sagemaker.amazonaws.com' } },
      },
    ]);
  });

  it('is not granted at all when no roles are configured', () => {
    for (const name of NAMES) expect(actionsOf(defaults, name)).not.toContain('iam:PassRole');
  });
});

describe('TorchxServerless AWS Batch permissions', () => {
  it("submits only to the configured queues, from the stack's own job definitions (its name prefix)", () => {
    expect(resourcesFor(configured, 'Run', 'batch:SubmitJob')).toEqual(
      [
        stackArn('batch', 'job-definition/TorchxServerless-test_*'),
        stackArn('batch', 'job-queue/gpu-queue'),
        'arn:aws:batch:us-west-2:123456789012:job-queue/cpu-queue',
        stackArn('batch', 'job/*'),
      ].sort(),
    );
    expect(resourcesFor(configured, 'Run', 'batch:RegisterJobDefinition')).toEqual([
      stackArn('batch', 'job-definition/TorchxServerless-test_*'),
    ]);
  });

  it("tags only new jobs and the stack's job definitions, and stops and deregisters only within this account and Region", () => {
    expect(resourcesFor(defaults, 'Run', 'batch:TagResource')).toEqual(
      [stackArn('batch', 'job-definition/TorchxServerless-test_*'), stackArn('batch', 'job/*')].sort(),
    );
    for (const name of ['Cancel', 'Delete']) {
      expect(resourcesFor(defaults, name, 'batch:TerminateJob')).toEqual([stackArn('batch', 'job/*')]);
      expect(resourcesFor(defaults, name, 'batch:CancelJob')).toEqual([stackArn('batch', 'job/*')]);
    }
    expect(resourcesFor(defaults, 'Delete', 'batch:DeregisterJobDefinition')).toEqual([
      stackArn('batch', 'job-definition/*'),
    ]);
  });
});

describe('TorchxServerless SageMaker and log permissions', () => {
  it('scopes training-job actions to training jobs of this account and Region', () => {
    for (const [name, action] of [
      ['Run', 'sagemaker:CreateTrainingJob'],
      ['Run', 'sagemaker:AddTags'],
      ['Status', 'sagemaker:DescribeTrainingJob'],
      ['Cancel', 'sagemaker:StopTrainingJob'],
    ] as const) {
      expect(resourcesFor(defaults, name, action)).toEqual([stackArn('sagemaker', 'training-job/*')]);
    }
  });

  it('reads logs from the default Batch and SageMaker log groups only', () => {
    expect(resourcesFor(defaults, 'Logs', 'logs:GetLogEvents')).toEqual([
      stackArn('logs', 'log-group:/aws/batch/job:*'),
      stackArn('logs', 'log-group:/aws/sagemaker/TrainingJobs:*'),
    ]);
  });

  it('reads logs from exactly the configured log groups', () => {
    expect(resourcesFor(batchOnly, 'Logs', 'logs:GetLogEvents')).toEqual([
      stackArn('logs', 'log-group:/teams/ml/batch:*'),
    ]);
    expect(resourcesFor(batchOnly, 'Logs', 'logs:DescribeLogStreams')).toEqual([
      stackArn('logs', 'log-group:/teams/ml/batch:*'),
    ]);
  });

  it('grants nothing for a scheduler that is not enabled', () => {
    for (const name of NAMES) {
      expect(actionsOf(batchOnly, name).filter((a) => a.startsWith('sagemaker:'))).toEqual([]);
    }
    expect(actionsOf(batchOnly, 'Run')).toContain('batch:SubmitJob');
  });
});
