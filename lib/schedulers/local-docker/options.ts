/**
 * Run options of the `local_docker` scheduler: exactly TorchX's (`DockerScheduler._run_opts` followed by the
 * Docker workspace options `image_repo` and `quiet`): names, types, defaults and help text.
 *
 * @module
 */
import { type Cfg, RunOpts } from '../../specs/index.js';
import { IMAGE_REPO_HELP, QUIET_HELP } from '../kubernetes/options.js';

/** The resolved run options of `local_docker`. */
export interface LocalDockerOpts extends Cfg {
  copy_env: string[] | null;
  env: Record<string, string> | null;
  privileged: boolean;
  image_repo: string | null;
  quiet: boolean;
}

/**
 * Declares the options of `local_docker`, in TorchX's order (the `env` help keeps TorchX's line breaks).
 *
 * @example
 * ```ts
 * localDockerRunOpts().resolve({}).privileged; // false
 * ```
 */
export function localDockerRunOpts(): RunOpts {
  return new RunOpts()
    .add('copy_env', {
      type: 'list[str]',
      help: 'list of glob patterns of environment variables to copy if not set in AppDef. Ex: FOO_*',
    })
    .add('env', {
      type: 'dict[str,str]',
      help:
        'environment variables to be passed to the run. The separator sign can be eiher comma or semicolon\n' +
        '            (e.g. ENV1:v1,ENV2:v2,ENV3:v3 or ENV1:V1;ENV2:V2). Environment variables from env will be applied on top\n' +
        '            of the ones from copy_env',
    })
    .add('privileged', {
      type: 'bool',
      default: false,
      help: 'If true runs the container with elevated permissions. Equivalent to running with `docker run --privileged`.',
    })
    .add('image_repo', { type: 'str', help: IMAGE_REPO_HELP })
    .add('quiet', { type: 'bool', default: false, help: QUIET_HELP });
}
