/**
 * slurm: TorchX's sbatch script submitted through slurmrestd. Configuration is read once, when
 * the scheduler is first used (cold start); without `TXS_SLURM_URL` only dry runs work.
 */
import { readFileSync } from 'node:fs';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import { type SlurmAuth, SlurmRestClient, SlurmScheduler } from '../../lib/schedulers/slurm/index.js';
import { ENV } from '../shared/env-names.js';
import { readSecretBytes } from './secret.js';

/** The slurmrestd client's authentication from the environment: a token, or the cluster's JWT key file. */
export function slurmAuthFromEnv(env: NodeJS.ProcessEnv): SlurmAuth | undefined {
  const token = env[ENV.slurmToken];
  if (token) return { token };
  const keyFile = env[ENV.slurmJwtKeyFile];
  if (keyFile) return { jwtKey: readFileSync(keyFile) };
  const key = env[ENV.slurmJwtKey];
  if (key) return { jwtKey: Buffer.from(key, 'base64') };
  const secretArn = env[ENV.slurmJwtKeySecretArn];
  // read on the first call that needs a token (once per cold start)
  if (secretArn) return { jwtKey: () => readSecretBytes(secretArn) };
  return undefined;
}

/** The slurm factory; the environment is read when the scheduler is built. */
export function create(): SchedulerFactory {
  return (ctx) => {
    const env = process.env;
    const url = env[ENV.slurmUrl];
    const auth = slurmAuthFromEnv(env);
    const user = env[ENV.slurmUser];
    const options: ConstructorParameters<typeof SlurmScheduler>[1] = {
      gpusPerNode: env[ENV.slurmGpusPerNode] === 'true',
    };
    if (url && auth && user) options.client = new SlurmRestClient({ url, user, auth });
    const workDir = env[ENV.slurmWorkDir];
    if (workDir) options.workDir = workDir;
    const logRoot = env[ENV.slurmLogRoot];
    if (logRoot) options.logRoot = logRoot;
    return new SlurmScheduler(ctx, options);
  };
}
