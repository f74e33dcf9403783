/** Run requests the reliability tests submit through the functions: one per AWS scheduler. */

/** `utils.echo` on aws_batch. */
export const BATCH_RUN = {
  scheduler: 'aws_batch',
  component: 'utils.echo',
  args: ['--msg', 'hi'],
  cfg: { queue: 'ml-gpu-queue' },
};

/** `utils.echo` on aws_sagemaker, with the options SageMaker requires. */
export const SAGEMAKER_RUN = {
  scheduler: 'aws_sagemaker',
  component: 'utils.echo',
  args: ['--msg', 'hi', '--image', '123456789012.dkr.ecr.us-east-1.amazonaws.com/torchx:0.8'],
  cfg: {
    role: 'arn:aws:iam::123456789012:role/SageMakerExecution',
    output_path: 's3://ml-bucket/out/',
    instance_type: 'ml.g5.xlarge',
  },
};
