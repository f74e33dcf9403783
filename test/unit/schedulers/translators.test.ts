/**
 * The translators (no SDK client) the dry-run and scheduler-listing functions register: the same dry runs,
 * run options and capabilities as the full schedulers, and no backend call.
 */
import { describe, expect, it } from 'vitest';
import { AwsBatchTranslator, createAwsBatchScheduler } from '../../../lib/schedulers/aws-batch/index.js';
import {
  AwsSageMakerTranslator,
  createAwsSageMakerScheduler,
} from '../../../lib/schedulers/aws-sagemaker/index.js';
import { NotSupportedError } from '../../../lib/schedulers/errors.js';
import type { Scheduler } from '../../../lib/schedulers/scheduler.js';
import { TranslatingScheduler } from '../../../lib/schedulers/translating.js';
import { type Cfg, makeAppDef, makeRole, namedResource } from '../../../lib/specs/index.js';
import { fakeBatchClient, fakeLogsClient } from '../aws-batch/helpers.js';

const context = { sessionName: 'torchx' };
const stackTags = { 'torchx-serverless:stack': 'txs-test' };
const app = makeAppDef({
  name: 'train',
  roles: [
    makeRole({
      name: 'trainer',
      image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1',
      entrypoint: 'python',
      args: ['train.py', '--epochs', '3'],
      numReplicas: 2,
      resource: namedResource('aws_g5.2xlarge'),
    }),
  ],
});

/** The parts of a scheduler that dry runs and `GET /v1/schedulers` use, for comparison. */
function planned(scheduler: Scheduler, cfg: Cfg) {
  const info = scheduler.validatedDryrun(app, scheduler.runOpts().resolve(cfg));
  return {
    request: info.request,
    app: info.app,
    appId: scheduler.appIdOf(info),
    capabilities: scheduler.capabilities(),
    runOpts: scheduler.runOpts().describe(),
  };
}

async function refusals(scheduler: Scheduler, cfg: Cfg): Promise<unknown[]> {
  const info = scheduler.submitDryrun(app, cfg);
  return Promise.all([
    scheduler.schedule(info).catch((error: unknown) => error),
    scheduler.describe('gpu:train-k3x9').catch((error: unknown) => error),
    scheduler.cancel('gpu:train-k3x9').catch((error: unknown) => error),
  ]);
}

describe('AwsBatchTranslator', () => {
  const options = { defaultUser: 'alice', uniqueNamer: (p: string) => `${p}-t4rcs9x6sv1m`, stackTags };

  it('dry-runs exactly as the aws_batch scheduler: request, app id, capabilities and run options', () => {
    const scheduler = createAwsBatchScheduler(context, {
      ...options,
      batchClient: fakeBatchClient(),
      logsClient: fakeLogsClient(),
    });
    const cfg = { queue: 'gpu', privileged: false };
    expect(planned(new AwsBatchTranslator(context, options), cfg)).toEqual(planned(scheduler, cfg));
  });

  it('refuses to submit, describe or cancel (NotSupportedError naming the scheduler)', async () => {
    for (const error of await refusals(new AwsBatchTranslator(context, options), { queue: 'gpu' })) {
      expect(error).toBeInstanceOf(NotSupportedError);
      expect((error as Error).message).toMatch(/^aws_batch supports dry runs only .*only translates/);
    }
  });
});

describe('AwsSageMakerTranslator', () => {
  const options = {
    defaultUser: 'alice',
    uniqueId: () => 't4rcs9x6sv1m',
    stackTags,
    allowedInstanceTypes: ['ml.g5.2xlarge'],
  };
  const cfg = { role: 'arn:aws:iam::123456789012:role/sm-exec', output_path: 's3://my-bucket/out' };

  it('dry-runs exactly as the aws_sagemaker scheduler: request, app id, capabilities and run options', () => {
    const single = { ...app, roles: app.roles.map((r) => ({ ...r, numReplicas: 1 })) };
    const scheduler = createAwsSageMakerScheduler(context, options);
    const translator = new AwsSageMakerTranslator(context, options);
    expect(translator.validatedDryrun(single, translator.runOpts().resolve(cfg)).request).toEqual(
      scheduler.validatedDryrun(single, scheduler.runOpts().resolve(cfg)).request,
    );
    expect(translator.capabilities()).toEqual(scheduler.capabilities());
    expect(translator.runOpts().describe()).toEqual(scheduler.runOpts().describe());
  });

  it('refuses instance types the deployment does not allow, as the scheduler does', () => {
    const translator = new AwsSageMakerTranslator(context, {
      ...options,
      allowedInstanceTypes: ['ml.c5.xlarge'],
    });
    expect(() => translator.validatedDryrun(app, translator.runOpts().resolve(cfg))).toThrow(
      /ml\.g5\.2xlarge/,
    );
  });

  it('refuses to submit, describe or cancel (NotSupportedError naming the scheduler)', async () => {
    for (const error of await refusals(new AwsSageMakerTranslator(context, options), cfg)) {
      expect(error).toBeInstanceOf(NotSupportedError);
      expect((error as Error).message).toMatch(/^aws_sagemaker supports dry runs only .*only translates/);
    }
  });
});

describe('the AWS schedulers', () => {
  it('hold their translator rather than derive from a scheduler that refuses to submit', () => {
    const batch = createAwsBatchScheduler(context, {
      batchClient: fakeBatchClient(),
      logsClient: fakeLogsClient(),
    });
    const sageMaker = createAwsSageMakerScheduler(context);
    for (const scheduler of [batch, sageMaker]) {
      expect(scheduler).not.toBeInstanceOf(TranslatingScheduler);
      expect(scheduler).not.toBeInstanceOf(AwsBatchTranslator);
      expect(scheduler).not.toBeInstanceOf(AwsSageMakerTranslator);
    }
  });
});
