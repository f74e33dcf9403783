/** The construct's `slurm` props: the functions' environment, GetSecretValue on exactly the key's secret, checks. */
import { beforeAll, describe, expect, it } from 'vitest';
import { TorchxServerlessPropsError } from '../../../cdk/constructs/prop-issues.js';
import { ENV } from '../../../functions/shared/env-names.js';
import {
  buildStack,
  cfnFunctionOf,
  logicalIdOf,
  resourcesFor,
  type Synthesized,
  synthesize,
} from './synth.js';

const SECRET = 'arn:aws:secretsmanager:us-west-2:123456789012:secret:slurm-jwt-AbCdEf';
const SLURM = {
  restUrl: 'http://10.0.0.10:6820',
  user: 'torchx',
  jwtKeySecretArn: SECRET,
  workDir: '/shared/jobs',
};

describe('TorchxServerless slurm', () => {
  let withSlurm: Synthesized;
  beforeAll(() => {
    withSlurm = synthesize({
      schedulers: ['aws_batch', 'slurm'],
      batchJobQueues: ['gpu-queue'],
      slurm: SLURM,
    });
  });

  it('hands the functions the slurmrestd URL, user, working directory and the secret ARN (never the key)', () => {
    const props = withSlurm.template.toJSON().Resources[logicalIdOf(cfnFunctionOf(withSlurm.stack, 'Run'))]
      .Properties as { Environment: { Variables: Record<string, unknown> } };
    const env = props.Environment.Variables;
    expect(env[ENV.schedulers]).toBe('aws_batch,slurm');
    expect(env[ENV.slurmUrl]).toBe('http://10.0.0.10:6820');
    expect(env[ENV.slurmUser]).toBe('torchx');
    expect(env[ENV.slurmWorkDir]).toBe('/shared/jobs');
    expect(env[ENV.slurmJwtKeySecretArn]).toBe(SECRET);
    expect(env[ENV.slurmJwtKey]).toBeUndefined();
  });

  it('lets exactly the functions that call schedulers read exactly that secret', () => {
    for (const name of ['Run', 'Status', 'Cancel', 'Delete', 'Logs', 'Reconciler']) {
      expect(resourcesFor(withSlurm, name, 'secretsmanager:GetSecretValue')).toEqual([SECRET]);
    }
    for (const name of ['Schedulers', 'Dryrun', 'List', 'StateChange']) {
      expect(resourcesFor(withSlurm, name, 'secretsmanager:GetSecretValue')).toEqual([]);
    }
    const without = synthesize({});
    expect(resourcesFor(without, 'Run', 'secretsmanager:GetSecretValue')).toEqual([]);
  });

  it('refuses slurm without its cluster, a URL that is not http(s) and an ARN that is not a secret', () => {
    expect(() => buildStack({ schedulers: ['slurm'] })).toThrow(TorchxServerlessPropsError);
    expect(() => buildStack({ schedulers: ['slurm'] })).toThrow(/slurm/);
    const bad = () =>
      buildStack({
        schedulers: ['slurm'],
        slurm: { ...SLURM, restUrl: 'ftp://x', jwtKeySecretArn: 'arn:aws:iam::1:role/x' },
      });
    expect(bad).toThrow(/slurm\.restUrl/);
    expect(bad).toThrow(/slurm\.jwtKeySecretArn/);
  });
});
