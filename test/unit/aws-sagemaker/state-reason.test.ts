/** SageMaker state reasons: the SecondaryStatus steps with their StartTime and StatusMessage, and FailureReason. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type SageMakerTrainingJobLike,
  sageMakerStateReasonOf,
  sageMakerTransitionOf,
} from '../../../lib/schedulers/aws-sagemaker/state.js';

function eventDetail(name: string): SageMakerTrainingJobLike {
  const url = new URL(`../../fixtures/aws-sagemaker/events/sagemaker-${name}.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { detail: SageMakerTrainingJobLike }).detail;
}

describe('sageMakerStateReasonOf', () => {
  it.each([
    ['inprogress-starting', 'Starting', 'Launching requested ML instances', 1735740002000],
    ['inprogress-downloading', 'Downloading', 'Downloading input data', 1735740185000],
    [
      'inprogress-training',
      'Training',
      'Training image download completed. Training in progress.',
      1735740240000,
    ],
  ])(
    'reports %s as step %s with its message, holding since the step’s StartTime',
    (name, code, text, start) => {
      expect(sageMakerStateReasonOf(eventDetail(name))).toEqual({
        text,
        code,
        since: new Date(start).toISOString(),
        source: 'aws_sagemaker',
      });
    },
  );

  it('reports a failed job’s FailureReason, holding since it ended', () => {
    const reason = sageMakerStateReasonOf(eventDetail('failed'));
    expect(reason).toMatchObject({
      text: 'AlgorithmError: ExecuteUserScriptError: Command "/usr/bin/python3 train.py" exited with code 1',
      code: 'Failed',
      since: new Date(1735740900000).toISOString(),
    });
  });

  it('puts the step on the transition each event becomes, so every step is a new reason', () => {
    const steps = ['inprogress-starting', 'inprogress-downloading', 'inprogress-training'].map(
      (name) => sageMakerTransitionOf(eventDetail(name), 'event').stateReason?.code,
    );
    expect(steps).toEqual(['Starting', 'Downloading', 'Training']);
  });
});
