/**
 * Run options of the `lsf` scheduler: exactly TorchX's (`LsfScheduler._run_opts`): names, types, defaults and
 * help text.
 *
 * @module
 */
import { type Cfg, RunOpts } from '../../specs/index.js';

/** The resolved run options of `lsf`. */
export interface LsfOpts extends Cfg {
  lsf_queue: string | null;
  jobdir: string | null;
  container_workdir: string | null;
  host_network: boolean;
  shm_size: string;
}

/**
 * Declares the options of `lsf`, in TorchX's order.
 *
 * @example
 * ```ts
 * lsfRunOpts().resolve({}).shm_size; // '64m'
 * ```
 */
export function lsfRunOpts(): RunOpts {
  return new RunOpts()
    .add('lsf_queue', { type: 'str', help: 'queue name to submit jobs' })
    .add('jobdir', {
      type: 'str',
      help: 'The directory to place the job code and outputs. The directory must not exist and will be created.',
    })
    .add('container_workdir', { type: 'str', help: 'working directory in container jobs' })
    .add('host_network', { type: 'bool', default: false, help: 'True if using the host network for jobs' })
    .add('shm_size', { type: 'str', default: '64m', help: 'size of shared memory (/dev/shm) for jobs' });
}
