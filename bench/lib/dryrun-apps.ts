/**
 * The dry-run bench's requests (bench/dryrun.ts, bench/dryrun-profile.ts): the same AppDefs
 * bench/torchx-dryrun.py gives TorchX's `submit_dryrun`.
 */

/** `dist.ddp -j 2x8 --script train.py` on aws_batch. */
export const DDP = {
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'ml-gpu-queue' },
};

/** Five roles on aws_batch, 1 to 5 replicas each. */
export const FIVE_ROLES = {
  scheduler: 'aws_batch',
  cfg: { queue: 'ml-gpu-queue' },
  app: {
    name: 'pipeline',
    roles: ['reader', 'trainer', 'evaluator', 'ps', 'writer'].map((name, i) => ({
      name,
      image: 'ghcr.io/pytorch/torchx:0.8',
      entrypoint: 'python',
      args: ['-m', `pipeline.${name}`, '--shard', String(i)],
      env: { ROLE: name, LOGLEVEL: 'INFO' },
      numReplicas: i + 1,
      resource: { cpu: 4, gpu: i === 1 ? 8 : 0, memMB: 16_384 },
      maxRetries: 2,
    })),
  },
};

/** The AppDef of bench/torchx-dryrun.py's `sagemaker_app` (TorchX requires `instance_type`). */
export const SAGEMAKER = {
  scheduler: 'aws_sagemaker',
  cfg: {
    role: 'arn:aws:iam::123456789012:role/sm-exec',
    instance_type: 'ml.g5.xlarge',
    output_path: 's3://my-bucket/out',
  },
  app: {
    name: 'train',
    roles: [
      {
        name: 'trainer',
        image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1',
        entrypoint: 'python',
        args: ['train.py', '--epochs', '10', '--lr', '0.01'],
        env: { LOGLEVEL: 'INFO' },
        numReplicas: 2,
        resource: 'aws_g5.xlarge',
        maxRetries: 1,
      },
    ],
  },
};

/** The apps, by the names bench/torchx-dryrun.py knows them by. */
export const APPS = [
  ['dist.ddp 2x8 (aws_batch)', DDP],
  ['5-role AppDef (aws_batch)', FIVE_ROLES],
  ['1-role AppDef (aws_sagemaker)', SAGEMAKER],
] as const;
