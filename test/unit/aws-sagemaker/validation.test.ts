import { CreateTrainingJobCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import 'aws-sdk-client-mock-vitest/extend';
import { materializeComponent } from '../../../lib/components/index.js';
import { AppNotSupportedError } from '../../../lib/schedulers/index.js';
import {
  type AppDef,
  type Cfg,
  type FieldIssue,
  InvalidRunConfigError,
  makeAppDef,
  makeRole,
  namedResource,
  TxsError,
  ValidationError,
} from '../../../lib/specs/index.js';
import { BASE_CFG, IMAGE, makeScheduler, ROLE_ARN } from './helpers.js';

function app(overrides: Partial<Parameters<typeof makeRole>[0]> = {}, extra: Partial<AppDef> = {}): AppDef {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: IMAGE,
        entrypoint: 'python',
        args: ['train.py'],
        resource: namedResource('aws_g5.xlarge'),
        ...overrides,
      }),
    ],
    ...extra,
  });
}

/** The error `validate` throws (fails the test when it throws nothing). */
function rejection(application: AppDef, cfg: Cfg = BASE_CFG): TxsError {
  try {
    makeScheduler().validate(application, cfg);
  } catch (error) {
    if (error instanceof TxsError) return error;
    throw error;
  }
  throw new Error('expected validate to throw');
}

function issueAt(error: TxsError, path: string): FieldIssue {
  const issue = error.issues.find((i) => i.path === path);
  if (!issue) throw new Error(`no issue at ${path}; got ${JSON.stringify(error.issues)}`);
  return issue;
}

describe('AwsSageMakerScheduler validation', () => {
  describe('app shape', () => {
    it('rejects an app with several roles with AppNotSupportedError naming app.roles', () => {
      const twoRoles = app();
      twoRoles.roles.push(
        makeRole({ name: 'ps', image: IMAGE, entrypoint: 'python', resource: namedResource('cpu.small') }),
      );
      const error = rejection(twoRoles);
      expect(error).toBeInstanceOf(AppNotSupportedError);
      expect(issueAt(error, 'app.roles').message).toMatch(
        /one homogeneous cluster.*2 roles \(trainer, ps\).*aws_batch/,
      );
    });

    it('rejects mounts with AppNotSupportedError naming app.roles.0.mounts and pointing to S3 channels', () => {
      const error = rejection(
        app({ mounts: [{ type: 'bind', srcPath: '/data', dstPath: '/data', readOnly: true }] }),
      );
      expect(error).toBeInstanceOf(AppNotSupportedError);
      expect(issueAt(error, 'app.roles.0.mounts').message).toMatch(/cfg\.inputs/);
    });

    it('rejects an app without roles', () => {
      expect(issueAt(rejection(makeAppDef({ name: 'empty' })), 'app.roles').message).toMatch(/one role/);
    });

    it('rejects a role without an entrypoint', () => {
      expect(issueAt(rejection(app({ entrypoint: '<MISSING>' })), 'app.roles.0.entrypoint').message).toMatch(
        /is required/,
      );
    });

    it('rejects the <NONE> image of utils.binary and local sha256 images', () => {
      const binary = materializeComponent('utils.binary', ['--entrypoint', '/bin/train']);
      expect(
        issueAt(rejection(binary, { ...BASE_CFG, instance_type: 'ml.m5.large' }), 'app.roles.0.image')
          .message,
      ).toMatch(/training image URI/);
      expect(issueAt(rejection(app({ image: 'sha256:abc' })), 'app.roles.0.image').message).toMatch(
        /push the image/,
      );
    });
  });

  describe('image', () => {
    it('refuses an image SageMaker cannot pull (not in ECR) naming app.roles.0.image, unless pulled through a VPC', () => {
      for (const image of [
        'ghcr.io/pytorch/torchx:0.8.0dev0',
        'pytorch/pytorch:2.4',
        'public.ecr.aws/x/y:1',
      ]) {
        expect(issueAt(rejection(app({ image })), 'app.roles.0.image').message).toMatch(
          /not an Amazon ECR image.*training_repository_access_mode=Vpc/,
        );
      }
      expect(() =>
        makeScheduler().validate(app({ image: 'registry.internal:5000/train:1' }), {
          ...BASE_CFG,
          training_repository_access_mode: 'Vpc',
          subnets: ['subnet-0a1b2c3d'],
          security_group_ids: ['sg-0a1b2c3d'],
        }),
      ).not.toThrow();
      const noVpc = rejection(app({ image: 'registry.internal:5000/train:1' }), {
        ...BASE_CFG,
        training_repository_access_mode: 'Vpc',
      });
      expect(issueAt(noVpc, 'cfg.subnets').message).toMatch(/give subnets and security_group_ids/);
      expect(() =>
        makeScheduler().validate(
          app({ image: '123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/t@sha256:ab' }),
          BASE_CFG,
        ),
      ).not.toThrow();
    });
  });

  describe('run options', () => {
    it('requires role and output_path before anything else', () => {
      expect(() => makeScheduler().validate(app(), { role: ROLE_ARN })).toThrow(InvalidRunConfigError);
      try {
        makeScheduler().validate(app(), { role: ROLE_ARN });
      } catch (error) {
        expect((error as TxsError).issues[0]?.path).toBe('cfg.output_path');
      }
    });

    it('rejects a bare role name and says how to build the ARN', () => {
      const error = rejection(app(), { ...BASE_CFG, role: 'SageMakerExecution' });
      expect(issueAt(error, 'cfg.role').message).toBe(
        "'SageMakerExecution' looks like a role name; SageMaker needs the role ARN and the account id cannot be " +
          'derived here: use arn:aws:iam::<account id>:role/SageMakerExecution',
      );
    });

    it('rejects a role ARN of another resource type', () => {
      const error = rejection(app(), { ...BASE_CFG, role: 'arn:aws:iam::123456789012:user/alice' });
      expect(issueAt(error, 'cfg.role').message).toMatch(/not an IAM role ARN/);
    });

    it('accepts role ARNs with paths and other partitions', () => {
      const scheduler = makeScheduler({ ids: ['b', 'c'] });
      expect(() =>
        scheduler.validate(app(), {
          ...BASE_CFG,
          role: 'arn:aws:iam::123456789012:role/service-role/SM-Exec',
        }),
      ).not.toThrow();
      expect(() =>
        scheduler.validate(app(), { ...BASE_CFG, role: 'arn:aws-cn:iam::123456789012:role/SageMaker' }),
      ).not.toThrow();
    });

    it('rejects an output_path that is not an S3 URI', () => {
      expect(
        issueAt(rejection(app(), { ...BASE_CFG, output_path: '/tmp/out' }), 'cfg.output_path').message,
      ).toMatch(/S3 URI/);
    });

    it('requires instance_type when the resource names no instance type', () => {
      const error = rejection(app({ resource: namedResource('gpu.small') }));
      expect(issueAt(error, 'cfg.instance_type').message).toMatch(/aws_g5\.xlarge/);
    });

    it('suggests the ml. form of an EC2 instance type', () => {
      const error = rejection(app(), { ...BASE_CFG, instance_type: 'p4d.24xlarge' });
      expect(issueAt(error, 'cfg.instance_type').message).toMatch(/Did you mean: ml\.p4d\.24xlarge\?/);
    });

    it('rejects a named resource whose instance type SageMaker does not offer for training', () => {
      const error = rejection(app({ resource: namedResource('aws_inf2.xlarge') }));
      expect(issueAt(error, 'app.roles.0.resource').message).toMatch(/ml\.inf2\.xlarge.*cfg\.instance_type/);
    });

    it('rejects an instance_count that disagrees with numReplicas', () => {
      const error = rejection(app({ numReplicas: 2 }), { ...BASE_CFG, instance_count: 4 });
      expect(issueAt(error, 'cfg.instance_count').message).toMatch(
        /is 4 but app\.roles\.0\.numReplicas is 2/,
      );
    });

    it.each([
      ['max_run', 28 * 24 * 3600 + 1, /between 1 and 2419200/],
      ['max_run', 0, /between 1 and 2419200/],
      ['keep_alive_period_in_seconds', 21_601, /between 0 and 21600/],
      ['max_retry_attempts', 31, /between 1 and 30/],
      ['max_retry_attempts', 0, /between 1 and 30/],
      ['volume_size', 0, /at least 1/],
    ])('rejects %s = %d', (key, value, message) => {
      expect(issueAt(rejection(app(), { ...BASE_CFG, [key]: value }), `cfg.${key}`).message).toMatch(message);
    });

    it('accepts the limits themselves (28 days, 21600 s keep-alive, 30 retries)', () => {
      expect(() =>
        makeScheduler().validate(app(), {
          ...BASE_CFG,
          max_run: 2_419_200,
          keep_alive_period_in_seconds: 21_600,
          max_retry_attempts: 30,
        }),
      ).not.toThrow();
    });

    it('rejects maxRetries above 30 unless max_retry_attempts is given', () => {
      expect(issueAt(rejection(app({ maxRetries: 31 })), 'app.roles.0.maxRetries').message).toMatch(
        /at most 30/,
      );
      expect(() =>
        makeScheduler().validate(app({ maxRetries: 31 }), { ...BASE_CFG, max_retry_attempts: 5 }),
      ).not.toThrow();
    });

    it('requires max_wait ≥ max_run with spot instances, and spot instances with max_wait', () => {
      expect(
        issueAt(rejection(app(), { ...BASE_CFG, use_spot_instances: true }), 'cfg.max_wait').message,
      ).toMatch(/required with use_spot_instances/);
      expect(
        issueAt(
          rejection(app(), { ...BASE_CFG, use_spot_instances: true, max_run: 100, max_wait: 50 }),
          'cfg.max_wait',
        ).message,
      ).toMatch(/at least max_run \(100\)/);
      expect(issueAt(rejection(app(), { ...BASE_CFG, max_wait: 100_000 }), 'cfg.max_wait').message).toMatch(
        /use_spot_instances=true/,
      );
    });

    it('needs subnets and security groups together', () => {
      const error = rejection(app(), { ...BASE_CFG, subnets: ['subnet-1'] });
      expect(issueAt(error, 'cfg.security_group_ids').message).toMatch(/together with subnets/);
      const tooMany = rejection(app(), {
        ...BASE_CFG,
        subnets: ['subnet-1'],
        security_group_ids: ['sg-1', 'sg-2', 'sg-3', 'sg-4', 'sg-5', 'sg-6'],
      });
      expect(issueAt(tooMany, 'cfg.security_group_ids').message).toMatch(/at most 5/);
    });

    it('needs checkpoint_s3_uri for checkpoint_local_path', () => {
      const error = rejection(app(), { ...BASE_CFG, checkpoint_local_path: '/opt/ml/checkpoints' });
      expect(issueAt(error, 'cfg.checkpoint_local_path').message).toMatch(/checkpoint_s3_uri/);
    });

    it('rejects an unknown input_mode and access mode', () => {
      expect(issueAt(rejection(app(), { ...BASE_CFG, input_mode: 'Stream' }), 'cfg.input_mode').message).toBe(
        "must be one of File, FastFile, Pipe; got 'Stream'",
      );
      expect(
        issueAt(
          rejection(app(), { ...BASE_CFG, training_repository_access_mode: 'Docker' }),
          'cfg.training_repository_access_mode',
        ).message,
      ).toMatch(/Platform or Vpc/);
    });

    it('needs training_repository_access_mode=Vpc for a credentials provider', () => {
      const error = rejection(app(), {
        ...BASE_CFG,
        training_repository_credentials_provider_arn: 'arn:aws:lambda:us-east-1:123456789012:function:f',
      });
      expect(issueAt(error, 'cfg.training_repository_credentials_provider_arn').message).toMatch(/=Vpc/);
    });

    it('rejects a model channel that collides with an input channel', () => {
      const error = rejection(app(), {
        ...BASE_CFG,
        inputs: { model: 's3://b/m' },
        model_uri: 's3://b/base',
      });
      expect(issueAt(error, 'cfg.model_uri').message).toMatch(/channel 'model' is given twice/);
    });

    it('rejects a local model_uri', () => {
      expect(
        issueAt(rejection(app(), { ...BASE_CFG, model_uri: './model.tar.gz' }), 'cfg.model_uri').message,
      ).toMatch(/S3 URI/);
    });

    it('rejects malformed metric definitions', () => {
      const error = rejection(app(), { ...BASE_CFG, metric_definitions: [{ Name: 'loss' }] });
      expect(issueAt(error, 'cfg.metric_definitions.0').message).toMatch(/"Regex"/);
    });

    it.each([
      ['source_dir', 'src', /bake your code into the image/],
      ['sourceDir', 'src', /bake your code into the image/],
      ['dependencies', ['lib'], /install dependencies in the image/],
      ['git_config', { repo: 'x' }, /clone it in the entrypoint/],
      ['code_location', 's3://b/code', /bake your code into the image/],
      ['entry_point', 'train.py', /utils\.python -m/],
      ['container_log_level', 20, /SAGEMAKER_CONTAINER_LOG_LEVEL/],
      ['image_repo', 'repo', /push the image to Amazon ECR/],
    ])('rejects the SDK-only option %s with a hint', (key, value, hint) => {
      const error = rejection(app(), { ...BASE_CFG, [key]: value } as Cfg);
      expect(issueAt(error, `cfg.${key}`).message).toMatch(hint);
    });

    it('accepts debugger_hook_config=false and rejects true', () => {
      expect(() =>
        makeScheduler().validate(app(), { ...BASE_CFG, debugger_hook_config: false }),
      ).not.toThrow();
      expect(
        issueAt(rejection(app(), { ...BASE_CFG, debugger_hook_config: true }), 'cfg.debugger_hook_config')
          .message,
      ).toMatch(/not supported/);
    });
  });

  describe('SageMaker request limits', () => {
    it('rejects environment variable names SageMaker does not accept, naming the source', () => {
      const error = rejection(app({ env: { 'MY-VAR': 'x' } }), { ...BASE_CFG, environment: { '1BAD': 'y' } });
      expect(issueAt(error, 'app.roles.0.env.MY-VAR').message).toMatch(/\[a-zA-Z_\]/);
      expect(issueAt(error, 'cfg.environment.1BAD').message).toMatch(/\[a-zA-Z_\]/);
    });

    it('rejects environment values longer than 512 characters after macro substitution', () => {
      const error = rejection(app({ env: { LONG: `${'x'.repeat(500)}\${app_id}` } }));
      expect(issueAt(error, 'app.roles.0.env.LONG').message).toMatch(/at most 512/);
    });

    it('rejects more than 100 environment variables in total (4 are set by torchx-serverless)', () => {
      const env = Object.fromEntries(Array.from({ length: 97 }, (_, i) => [`V${i}`, 'x']));
      expect(issueAt(rejection(app({ env })), 'app.roles.0.env').message).toMatch(
        /101 environment variables/,
      );
      const fits = Object.fromEntries(Array.from({ length: 96 }, (_, i) => [`V${i}`, 'x']));
      expect(() => makeScheduler().validate(app({ env: fits }), BASE_CFG)).not.toThrow();
    });

    it('allows hyperparameter values up to 256 characters (they go on the command line), not more', () => {
      expect(() =>
        makeScheduler().validate(app(), { ...BASE_CFG, hyperparameters: { config: 'x'.repeat(256) } }),
      ).not.toThrow();
      const error = rejection(app(), { ...BASE_CFG, hyperparameters: { config: 'x'.repeat(257) } });
      expect(issueAt(error, 'cfg.hyperparameters.config').message).toMatch(
        /at most 256 characters per argument/,
      );
      const model = rejection(app(), { ...BASE_CFG, hyperparameters: { config: 'x'.repeat(2501) } });
      expect(
        model.issues.filter((i) => i.path === 'cfg.hyperparameters.config').map((i) => i.message),
      ).toEqual(expect.arrayContaining([expect.stringMatching(/at most 2500/)]));
    });

    it('rejects more than 100 hyperparameters', () => {
      const hyperparameters = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`h${i}`, '1']));
      expect(
        issueAt(rejection(app(), { ...BASE_CFG, hyperparameters }), 'cfg.hyperparameters').message,
      ).toMatch(/101 entries/);
    });

    it('rejects an argument longer than 256 characters and suggests a script (dist.ddp)', () => {
      const ddp = materializeComponent('dist.ddp', [
        '--image',
        IMAGE,
        '-j',
        '2x8',
        '-h',
        'aws_p4d.24xlarge',
        '--script',
        'train.py',
        '--',
        '--data',
        `s3://bucket/${'d'.repeat(60)}`,
        '--output',
        `s3://bucket/${'o'.repeat(60)}`,
      ]);
      const issue = issueAt(rejection(ddp), 'app.roles.0.args.1');
      expect(issue.message).toMatch(
        /characters after macro substitution; SageMaker allows at most 256 per argument/,
      );
      expect(issue.message).toMatch(/Put the command in a script/);
    });

    it('rejects more than 100 arguments', () => {
      const args = Array.from({ length: 101 }, (_, i) => `a${i}`);
      expect(issueAt(rejection(app({ args })), 'app.roles.0.args').message).toMatch(/101 arguments/);
    });

    it('rejects more than 50 tags in total', () => {
      const metadata = Object.fromEntries(Array.from({ length: 47 }, (_, i) => [`k${i}`, 'v']));
      const error = rejection(app({}, { metadata }));
      expect(issueAt(error, 'cfg.tags').message).toMatch(/51 tags/);
    });

    it('rejects reserved and malformed tags, naming where they came from', () => {
      const error = rejection(app({}, { metadata: { 'aws:owner': 'me', ok: 'bad#value' } }), {
        ...BASE_CFG,
        tags: [{ Name: 'x' }],
      });
      expect(issueAt(error, 'app.metadata.aws:owner').message).toMatch(/reserved prefix aws:/);
      expect(issueAt(error, 'app.metadata.ok').message).toMatch(/tag value for 'ok'/);
      expect(issueAt(error, 'cfg.tags.0').message).toMatch(/\{"Key"/);
    });

    it('lists every problem of a request in one error', () => {
      const error = rejection(app({ env: { 'A-B': '1' } }), {
        ...BASE_CFG,
        role: 'MyRole',
        output_path: 'bucket',
        max_run: 0,
      });
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.issues.map((i) => i.path)).toStrictEqual(
        expect.arrayContaining(['cfg.role', 'cfg.output_path', 'cfg.max_run', 'app.roles.0.env.A-B']),
      );
      expect(error.message).toMatch(/^The app cannot run on SageMaker: /);
    });
  });

  it('sends nothing to SageMaker when the app is invalid', async () => {
    const client = new SageMakerClient({});
    const sageMaker = mockClient(client);
    const scheduler = makeScheduler({ sageMakerClient: client });
    await expect(
      scheduler.submit(app({ numReplicas: 2 }), { ...BASE_CFG, instance_count: 3 }),
    ).rejects.toThrow(ValidationError);
    expect(sageMaker).not.toHaveReceivedCommand(CreateTrainingJobCommand);
  });
});

describe('AwsSageMakerScheduler.validatedDryrun', () => {
  /** An argument that fits with a 1-character suffix but not with the longest (14 characters). */
  function nearTheLimit(): AppDef {
    const fits = (arg: string) => {
      const info = makeScheduler({ ids: ['b'] }).submitDryrun(app({ args: ['train.py', arg] }), BASE_CFG);
      return (info.request.createTrainingJob.AlgorithmSpecification?.ContainerArguments?.[1] ?? '').length;
    };
    const base = fits('--id=${app_id}');
    return app({ args: ['train.py', `--id=\${app_id}${'x'.repeat(256 - base - 3)}`] });
  }

  it('rejects in its one translation what validate rejects for the longest suffix, with the same message', () => {
    const application = nearTheLimit();
    const scheduler = makeScheduler({ ids: ['b', 'b'] });
    const cfg = scheduler.runOpts().resolve(BASE_CFG);
    expect(() => scheduler.submitDryrun(application, cfg)).not.toThrow();
    const validateError = rejection(application);
    expect(() => scheduler.validatedDryrun(application, cfg)).toThrow(validateError.message);
    expect(validateError.message).toMatch(
      /app\.roles\.0\.args\.1: is 2\d\d characters after macro substitution/,
    );
  });

  it('returns what submitDryrun returns for an app that fits, drawing one unique id', () => {
    const scheduler = makeScheduler({ ids: ['k3x9', 'next'] });
    const cfg = scheduler.runOpts().resolve(BASE_CFG);
    const application = app({ args: ['train.py', '--id', '${app_id}'] });
    const info = scheduler.validatedDryrun(application, cfg);
    expect(info.request).toEqual(makeScheduler({ ids: ['k3x9'] }).submitDryrun(application, cfg).request);
    expect(info.request.createTrainingJob.TrainingJobName).toBe('train-k3x9');
    expect(scheduler.submitDryrun(application, cfg).request.createTrainingJob.TrainingJobName).toBe(
      'train-next',
    );
  });
});
