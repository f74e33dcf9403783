/**
 * slurm: TorchX's sbatch script submitted through slurmrestd, configured by the function's configuration
 * (`config.slurm`); without slurmrestd settings only dry runs work.
 */
import { readFileSync } from 'node:fs';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import { type SlurmAuth, SlurmRestClient, SlurmScheduler } from '../../lib/schedulers/slurm/index.js';
import type { SchedulerDeps } from './scheduler-module.js';
import type { SlurmAuthSetting, SlurmSettings } from './settings.js';

/**
 * The slurmrestd client's authentication: a token, or the cluster's JWT key. A key in Secrets Manager is read
 * by the first call that needs a token (once per cold start), with a client registered by `created`.
 */
export function slurmAuth(
  setting: SlurmAuthSetting,
  created: SchedulerDeps['created'] = (client) => client,
): SlurmAuth {
  if ('token' in setting) return { token: setting.token };
  if ('jwtKeyFile' in setting) return { jwtKey: readFileSync(setting.jwtKeyFile) };
  if ('jwtKeyBase64' in setting) return { jwtKey: Buffer.from(setting.jwtKeyBase64, 'base64') };
  const arn = setting.jwtKeySecretArn;
  return {
    jwtKey: async () => {
      const { readSecretBytes, secretsClient } = await import('./secret.js');
      return readSecretBytes(arn, created(secretsClient(arn)));
    },
  };
}

/** The slurm scheduler's construction options from its settings. */
function slurmOptions(
  settings: SlurmSettings,
  created: SchedulerDeps['created'],
): ConstructorParameters<typeof SlurmScheduler>[1] {
  const { rest, workDir, logRoot } = settings;
  return {
    gpusPerNode: settings.gpusPerNode,
    ...(rest
      ? {
          client: new SlurmRestClient({
            url: rest.url,
            user: rest.user,
            auth: slurmAuth(rest.auth, created),
          }),
        }
      : {}),
    ...(workDir === undefined ? {} : { workDir }),
    ...(logRoot === undefined ? {} : { logRoot }),
  };
}

/** The slurm factory. */
export function create(deps: SchedulerDeps): SchedulerFactory {
  return (ctx) => new SlurmScheduler(ctx, slurmOptions(deps.config.slurm, deps.created));
}
