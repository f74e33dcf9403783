import { describe, expect, it } from 'vitest';
import { Runner } from '../../../lib/runner/index.js';
import type { AppRecordStore } from '../../../lib/runner/store.js';
import { SchedulerRegistry } from '../../../lib/schedulers/index.js';
import { BASE_CFG, IMAGE, makeScheduler } from './helpers.js';

/** Dry runs never touch the store. */
const unusedStore = {} as AppRecordStore;

describe('AwsSageMakerScheduler behind the Runner', () => {
  it('dry-runs dist.ddp -j 2x8 with the session in TORCHX_JOB_ID and the job name in --rdzv_id', () => {
    const runner = new Runner({
      schedulers: new SchedulerRegistry({ aws_sagemaker: () => makeScheduler() }),
      store: unusedStore,
    });
    const info = runner.dryrunComponent(
      'dist.ddp',
      ['-j', '2x8', '-h', 'aws_p4d.24xlarge', '--image', IMAGE, '--script', 'train.py'],
      'aws_sagemaker',
      BASE_CFG,
      'research',
    );
    const input = (info.request as { createTrainingJob: Record<string, unknown> }).createTrainingJob;
    expect(input.TrainingJobName).toBe('train-t4rcs9x6sv1m');
    expect(input.Environment).toMatchObject({ TORCHX_JOB_ID: 'aws_sagemaker://research/train-t4rcs9x6sv1m' });
    expect(input.AlgorithmSpecification).toMatchObject({
      ContainerArguments: [
        '-c',
        'torchrun --rdzv_backend c10d --rdzv_endpoint ${TORCHX_RANK0_HOST:=localhost}:29500 ' +
          "--rdzv_id 'train-t4rcs9x6sv1m' --nnodes 2 --nproc_per_node 8 --tee 3 --role '' train.py",
      ],
    });
  });
});
