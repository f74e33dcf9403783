import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  parseSageMakerTime,
  type SageMakerTrainingJobLike,
  sageMakerNumRestarts,
  sageMakerRoleNameOf,
  sageMakerStateOf,
  sageMakerTagsOf,
  sageMakerTransitionOf,
  sageMakerUiUrl,
} from '../../../lib/schedulers/aws-sagemaker/state.js';
import {
  type AppState,
  type AppStateTransition,
  decideTransition,
  type TransitionPosition,
} from '../../../lib/specs/index.js';

function eventDetail(name: string): SageMakerTrainingJobLike {
  const url = new URL(`../../fixtures/aws-sagemaker/events/sagemaker-${name}.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { detail: SageMakerTrainingJobLike }).detail;
}

const UI_URL =
  'https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#jobs/ctl-run-01hzy3m8-ft';

describe('sageMakerTransitionOf', () => {
  it.each([
    ['inprogress-starting', 'PENDING', 1, 1735740002000, 'Starting: Launching requested ML instances'],
    [
      'inprogress-pending',
      'PENDING',
      2,
      1735740060000,
      'Pending: Insufficient capacity error from EC2 while launching instances, retrying!',
    ],
    ['inprogress-downloading', 'PENDING', 2, 1735740185000, 'Downloading: Downloading input data'],
    [
      'inprogress-training',
      'RUNNING',
      3,
      1735740240000,
      'Training: Training image download completed. Training in progress.',
    ],
    ['inprogress-uploading', 'RUNNING', 4, 1735743840000, 'Uploading: Uploading generated training model'],
    ['completed', 'SUCCEEDED', 5, 1735743900000, 'Completed: Training job completed'],
    [
      'failed',
      'FAILED',
      4,
      1735740900000,
      'AlgorithmError: ExecuteUserScriptError: Command "/usr/bin/python3 train.py" exited with code 1',
    ],
    ['stopping', 'RUNNING', 4, 1735741200000, 'Stopping: Stopping the training job'],
    ['stopped', 'CANCELLED', 5, 1735741320000, 'Stopped: Training job stopped'],
    [
      'stopped-maxruntime',
      'FAILED',
      4,
      1735826640000,
      'MaxRuntimeExceeded: Job stopped because it exceeded the maximum allowed runtime',
    ],
  ] as const)('maps the %s event to %s (attempt %d)', (fixture, state, attempt, eventTime, reason) => {
    // The state reason (SecondaryStatus steps) has its own tests (state-reason.test.ts).
    const { stateReason, ...transition } = sageMakerTransitionOf(eventDetail(fixture), 'event');
    expect(stateReason?.source).toBe('aws_sagemaker');
    expect(transition).toStrictEqual({
      state,
      eventTime,
      attempt,
      source: 'event',
      numRestarts: 0,
      reason,
      uiUrl: UI_URL,
    });
  });

  it('reads the AWS documentation example: string timestamps, no transitions, an empty tag map', () => {
    expect(sageMakerTransitionOf(eventDetail('doc-example-completed'), 'event')).toStrictEqual({
      state: 'SUCCEEDED',
      eventTime: 1583831889050,
      attempt: 0,
      source: 'event',
      numRestarts: 0,
      reason: 'Completed',
      stateReason: {
        text: 'Completed',
        code: 'Completed',
        since: new Date(1583831889050).toISOString(),
        source: 'aws_sagemaker',
      },
      uiUrl:
        'https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#jobs/89c96cc8-dded-4739-afcc-6f1dc936701d',
    });
  });

  it('reports one replica status per instance when the job carries its role name (tag map of an event)', () => {
    const detail = {
      ...eventDetail('inprogress-training'),
      Tags: { 'torchx.pytorch.org/role-name': 'trainer' },
    };
    expect(sageMakerTransitionOf(detail, 'event').roles).toStrictEqual([
      {
        role: 'trainer',
        replicas: [
          { id: 0, state: 'RUNNING', role: 'trainer', hostname: 'algo-1', structuredErrorMsg: '<NONE>' },
          { id: 1, state: 'RUNNING', role: 'trainer', hostname: 'algo-2', structuredErrorMsg: '<NONE>' },
        ],
      },
    ]);
  });

  it('accepts the DescribeTrainingJob shape: Date timestamps and a tag list', () => {
    const job: SageMakerTrainingJobLike = {
      TrainingJobName: 'Train-ABC-x1',
      TrainingJobArn: 'arn:aws:sagemaker:eu-west-1:123456789012:training-job/train-abc-x1',
      TrainingJobStatus: 'InProgress',
      SecondaryStatus: 'Training',
      LastModifiedTime: new Date('2025-01-01T10:00:00.000Z'),
      SecondaryStatusTransitions: [
        { Status: 'Starting', StartTime: new Date('2025-01-01T09:58:00Z') },
        { Status: 'Training', StartTime: new Date('2025-01-01T10:00:00Z') },
      ],
      ResourceConfig: { InstanceCount: 1, InstanceType: 'ml.g5.xlarge' },
      Environment: { TORCHX_ROLE_NAME: 'worker' },
    };
    const transition = sageMakerTransitionOf(job, 'describe');
    expect(transition).toMatchObject({
      state: 'RUNNING',
      eventTime: Date.parse('2025-01-01T10:00:00.000Z'),
      attempt: 2,
      source: 'describe',
      uiUrl: 'https://eu-west-1.console.aws.amazon.com/sagemaker/home?region=eu-west-1#jobs/Train-ABC-x1',
    });
    expect(transition.roles?.[0]?.role).toBe('worker');
  });

  it('falls back from LastModifiedTime to TrainingEndTime, the last transition, start and creation time', () => {
    expect(
      sageMakerTransitionOf({ TrainingJobStatus: 'Completed', TrainingEndTime: 5_000_000_000_000 }, 'event')
        .eventTime,
    ).toBe(5_000_000_000_000);
    expect(
      sageMakerTransitionOf(
        {
          TrainingJobStatus: 'InProgress',
          SecondaryStatusTransitions: [{ Status: 'Starting', StartTime: '4000000000000' }],
        },
        'event',
      ).eventTime,
    ).toBe(4_000_000_000_000);
    expect(
      sageMakerTransitionOf({ TrainingJobStatus: 'InProgress', CreationTime: 3_000_000_000 }, 'event')
        .eventTime,
    ).toBe(3_000_000_000_000);
    expect(sageMakerTransitionOf({ TrainingJobStatus: 'InProgress' }, 'event').eventTime).toBe(0);
  });

  it('lets a store that applies the events in order end in the final state, and ignores duplicates and late events', () => {
    const order = [
      'inprogress-starting',
      'inprogress-pending',
      'inprogress-downloading',
      'inprogress-training',
      'inprogress-uploading',
      'completed',
    ];
    let position: TransitionPosition = { state: 'SUBMITTED', attempt: 0, lastEventTime: 0 };
    const decisions: string[] = [];
    const feed = (t: AppStateTransition) => {
      const decision = decideTransition(position, t);
      decisions.push(decision);
      if (decision === 'apply') position = { state: t.state, attempt: t.attempt, lastEventTime: t.eventTime };
    };
    for (const name of order) feed(sageMakerTransitionOf(eventDetail(name), 'event'));
    feed(sageMakerTransitionOf(eventDetail('inprogress-training'), 'event'));
    feed(sageMakerTransitionOf(eventDetail('completed'), 'event'));
    expect(position.state).toBe('SUCCEEDED');
    expect(decisions).toStrictEqual([
      'apply',
      'apply',
      'apply',
      'apply',
      'apply',
      'apply',
      'terminal',
      'terminal',
    ]);
  });

  it('never lets Stopping end the app, so a later MaxRuntimeExceeded still reports FAILED', () => {
    const stopping = sageMakerTransitionOf(eventDetail('stopping'), 'event');
    const position: TransitionPosition = {
      state: stopping.state,
      attempt: stopping.attempt,
      lastEventTime: stopping.eventTime,
    };
    const exceeded = sageMakerTransitionOf(eventDetail('stopped-maxruntime'), 'event');
    expect(exceeded.state).toBe('FAILED');
    expect(decideTransition(position, exceeded)).toBe('apply');
  });
});

describe('sageMakerStateOf', () => {
  it.each<[string | undefined, string | undefined, AppState]>([
    ['InProgress', 'Starting', 'PENDING'],
    ['InProgress', 'Pending', 'PENDING'],
    ['InProgress', 'Downloading', 'PENDING'],
    ['InProgress', 'DownloadingTrainingImage', 'PENDING'],
    ['InProgress', 'LaunchingMLInstances', 'PENDING'],
    ['InProgress', 'PreparingTrainingStack', 'PENDING'],
    ['InProgress', 'Restarting', 'PENDING'],
    ['InProgress', 'Interrupted', 'PENDING'],
    ['InProgress', 'Training', 'RUNNING'],
    ['InProgress', 'Uploading', 'RUNNING'],
    ['InProgress', 'Updating', 'RUNNING'],
    ['InProgress', undefined, 'RUNNING'],
    ['InProgress', 'SomethingNew', 'RUNNING'],
    ['Completed', 'Completed', 'SUCCEEDED'],
    ['Failed', 'Failed', 'FAILED'],
    ['Stopped', 'Stopped', 'CANCELLED'],
    ['Stopped', 'MaxRuntimeExceeded', 'FAILED'],
    ['Stopped', 'MaxWaitTimeExceeded', 'FAILED'],
    ['Deleting', 'Completed', 'SUCCEEDED'],
    ['Deleting', 'MaxWaitTimeExceeded', 'FAILED'],
    ['Deleting', 'Stopped', 'CANCELLED'],
    ['Deleting', undefined, 'UNKNOWN'],
    ['Exploded', undefined, 'UNKNOWN'],
    [undefined, undefined, 'UNKNOWN'],
  ])('%s / %s → %s', (status, secondary, state) => {
    expect(sageMakerStateOf(status, secondary)).toBe(state);
  });

  it('maps Stopping to the state before the stop, or CANCELLED without transitions as TorchX does', () => {
    expect(sageMakerStateOf('Stopping', 'Stopping', [{ Status: 'Starting' }, { Status: 'Stopping' }])).toBe(
      'PENDING',
    );
    expect(sageMakerStateOf('Stopping', 'Stopping', [{ Status: 'Starting' }, { Status: 'Training' }])).toBe(
      'RUNNING',
    );
    expect(sageMakerStateOf('Stopping', 'Stopping')).toBe('CANCELLED'); // TorchX: Stopping → CANCELLED
    expect(sageMakerStateOf('InProgress', 'Stopping')).toBe('RUNNING'); // TorchX: InProgress → RUNNING
  });
});

describe('sageMakerNumRestarts', () => {
  it('counts Restarting and every later Starting that does not follow Restarting', () => {
    expect(sageMakerNumRestarts([{ Status: 'Starting' }, { Status: 'Training' }])).toBe(0);
    expect(
      sageMakerNumRestarts([
        { Status: 'Starting' },
        { Status: 'Training' },
        { Status: 'Restarting' },
        { Status: 'Starting' },
        { Status: 'Training' },
        { Status: 'Interrupted' },
        { Status: 'Starting' },
      ]),
    ).toBe(2);
  });
});

describe('parseSageMakerTime', () => {
  it.each([
    [1583831889050, 1583831889050],
    ['1583831889050', 1583831889050],
    [1592411992203.0, 1592411992203],
    [1583831889.05, 1583831889050],
    ['1583831889.05', 1583831889050],
    ['2020-03-10T09:18:09.050Z', 1583831889050],
    [new Date(1583831889050), 1583831889050],
    ['', undefined],
    ['yesterday', undefined],
    [undefined, undefined],
  ])('%s → %s', (value, expected) => {
    expect(parseSageMakerTime(value)).toBe(expected);
  });
});

describe('sageMakerUiUrl', () => {
  const helpers = JSON.parse(
    readFileSync(
      new URL('../../fixtures/aws-sagemaker/torchx-sagemaker-helpers.json', import.meta.url),
      'utf8',
    ),
  ) as { job_ui_url: { arn: string; ui_url: string | null }[] };

  it.each(helpers.job_ui_url.slice(0, 3))('matches TorchX for $arn', ({ arn, ui_url }) => {
    expect(sageMakerUiUrl(arn) ?? null).toBe(ui_url);
  });

  it('rejects trailing junk that TorchX ignored', () => {
    expect(helpers.job_ui_url[3]?.ui_url).toBe(
      'https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#jobs/42',
    );
    expect(sageMakerUiUrl('arn:aws:sagemaker:us-east-1:1234567890:training-job/42)')).toBeUndefined();
  });

  it('keeps upper-case job names (TorchX returned no URL for them)', () => {
    expect(sageMakerUiUrl('arn:aws:sagemaker:us-east-1:123456789012:training-job/my-job', 'My-Job')).toBe(
      'https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#jobs/My-Job',
    );
    expect(sageMakerUiUrl('arn:aws:sagemaker:us-east-1:123456789012:training-job/My-Job')).toBe(
      'https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#jobs/My-Job',
    );
  });

  it('builds console URLs for the China and GovCloud partitions', () => {
    expect(sageMakerUiUrl('arn:aws-cn:sagemaker:cn-north-1:123456789012:training-job/j')).toBe(
      'https://cn-north-1.console.amazonaws.cn/sagemaker/home?region=cn-north-1#jobs/j',
    );
    expect(sageMakerUiUrl('arn:aws-us-gov:sagemaker:us-gov-west-1:123456789012:training-job/j')).toBe(
      'https://console.amazonaws-us-gov.com/sagemaker/home?region=us-gov-west-1#jobs/j',
    );
    expect(sageMakerUiUrl('arn:aws-iso:sagemaker:us-iso-east-1:123456789012:training-job/j')).toBeUndefined();
  });
});

describe('tags and role names', () => {
  it('reads tags given as a map (events) or a list (API)', () => {
    expect(sageMakerTagsOf({ Tags: { a: '1' } })).toStrictEqual({ a: '1' });
    expect(sageMakerTagsOf({ Tags: [{ Key: 'a', Value: '1' }, { Key: 'b' }] })).toStrictEqual({
      a: '1',
      b: '',
    });
    expect(sageMakerTagsOf({})).toStrictEqual({});
  });

  it('prefers TORCHX_ROLE_NAME from the environment over the role-name tag', () => {
    expect(
      sageMakerRoleNameOf({
        Environment: { TORCHX_ROLE_NAME: 'env-role' },
        Tags: [{ Key: 'torchx.pytorch.org/role-name', Value: 'tag-role' }],
      }),
    ).toBe('env-role');
    expect(sageMakerRoleNameOf({ Tags: { 'torchx.pytorch.org/role-name': 'tag-role' } })).toBe('tag-role');
    expect(sageMakerRoleNameOf({})).toBeUndefined();
  });
});
