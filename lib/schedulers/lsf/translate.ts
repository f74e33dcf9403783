/**
 * Pure translation of an AppDef into the bsub script TorchX's `lsf` scheduler writes (`get_submit_script`):
 * one `bsub` per replica, each running the role's container with `docker run`; every replica after the first
 * waits for the first to start and avoids its host. The first replica's host is picked by `bhosts` when the
 * script is submitted; a dry run shows TorchX's placeholder `RANK0_HOST` in its place.
 *
 * @module
 */
import { type AppDef, applyMacros, makeUnique, type Role, shellQuote } from '../../specs/index.js';
import type { LsfOpts } from './options.js';

/** The native request of `lsf`: the script TorchX runs with `/bin/bash` to submit every replica. */
export interface LsfRequest {
  /** The LSF project (`bsub -P`) that groups the app's jobs; the app id. */
  appId: string;
  /** The command that runs the script (TorchX's `cmd`). */
  cmd: string[];
  /** The `jobdir` run option: where the script and the job outputs go. */
  jobdir: string | null;
  /** The bsub script, byte for byte TorchX's. */
  script: string;
}

/** Version TorchX writes into the script's header (the TorchX whose behaviour this reproduces). */
export const LSF_TORCHX_VERSION = '0.8.0dev0';
/** The placeholder TorchX's dry run shows for the host of the first replica (found with `bhosts` at submit). */
export const RANK0_HOST_PLACEHOLDER = 'RANK0_HOST';
/** The env var every replica gets, holding the first replica's host. */
export const LSF_RANK0_ENV = 'TORCHX_RANK0_HOST';

/** Makes the app's unique name from its name (TorchX `make_unique`); injectable so tests are deterministic. */
export type LsfUniqueNamer = (name: string) => string;

/**
 * Lower-cases `data` and keeps only `[a-z0-9_-]`, after dropping one leading `-` (TorchX
 * `lsf_scheduler.cleanup_str`).
 *
 * @example
 * ```ts
 * cleanupStr('Multi_Role.app'); // 'multi_roleapp'
 * ```
 */
export function cleanupStr(data: string): string {
  const text = data.startsWith('-') ? data.slice(1) : data;
  return (text.toLowerCase().match(/[a-z0-9\-_]/g) ?? []).join('');
}

/** Python's `str()` of a number as TorchX's resources carry it (ints print without a fraction). */
function pyStr(n: number): string {
  return String(n);
}

function dockerCommand(jobName: string, role: Role, cfg: LsfOpts): string {
  const cmds = ['docker', 'run', `--name=${jobName}`];
  for (const mount of role.mounts) {
    if (mount.type === 'bind') {
      cmds.push('-v', `${mount.srcPath}:${mount.dstPath}:${mount.readOnly ? 'ro' : 'rw'}`);
    } else if (mount.type === 'volume') {
      cmds.push('--mount', `type=volume,src=${mount.src},dst=${mount.dstPath}${mount.readOnly ? ',ro' : ''}`);
    } else {
      cmds.push(`--device=${mount.srcPath}:${mount.dstPath}:${mount.permissions}`);
    }
  }
  if (cfg.container_workdir) cmds.push('-w', cfg.container_workdir);
  if (cfg.host_network) {
    cmds.push('--net=host', '--ipc=host');
  } else {
    for (const port of Object.values(role.portMap)) cmds.push('-p', pyStr(port));
  }
  if (cfg.shm_size) cmds.push(`--shm-size=${cfg.shm_size}`);
  for (const [key, value] of Object.entries(role.env)) cmds.push('-e', `${key}=${value}`);
  const { cpu, memMB, gpu } = role.resource;
  if (cpu > 0) cmds.push(`--cpus=${pyStr(cpu)}`);
  if (memMB > 0) cmds.push(`--memory=${pyStr(memMB * 1024 * 1024)}`);
  if (gpu > 0) cmds.push('--gpus', 'all');
  cmds.push(
    '--entrypoint',
    role.entrypoint,
    '--rm',
    role.image,
    ...role.args.map((a) => a.replaceAll('$', '\\$')),
  );
  return cmds.map(shellQuote).join(' ');
}

function bsub(
  appId: string,
  jobName: string,
  role: Role,
  cfg: LsfOpts,
  headJobName: string,
  headHost: string,
): string {
  const args = ['bsub', '-P', appId, '-J', jobName];
  if (headJobName !== '') {
    args.push('-w', `"started(${headJobName})"`, '-R', `"select[hname!='${headHost}']"`);
  } else {
    args.push('-m', headHost);
  }
  const { jobdir } = cfg;
  if (jobdir) {
    args.push(
      '-cwd',
      jobdir,
      '-outdir',
      jobdir,
      '-oo',
      `${jobdir}/${jobName}.submit.out`,
      '-eo',
      `${jobdir}/${jobName}.submit.err`,
    );
  }
  if (cfg.lsf_queue) args.push('-q', cfg.lsf_queue);
  const { cpu, memMB, gpu } = role.resource;
  if (cpu > 0) args.push('-n', pyStr(cpu));
  // TorchX's text, including the stray `]` when no memory is given.
  args.push('-R', memMB > 0 ? `"span[hosts=1] rusage[mem=${pyStr(memMB)}]"` : '"span[hosts=1]]"');
  if (gpu > 0) args.push('-gpu', `"num=${pyStr(gpu)}:mode=shared:j_exclusive=yes"`);
  const command = dockerCommand(jobName, role, cfg);
  const redirect = jobdir ? ` > ${jobdir}/${jobName}.out 2> ${jobdir}/${jobName}.err` : '';
  return `${args.join(' ')} << EOF\n${command}${redirect}\nEOF`;
}

/**
 * The bsub script for `app` (TorchX `get_submit_script`), with `rank0Host` as the first replica's host.
 *
 * @example
 * ```ts
 * lsfScript('echo-t4rcs9x6sv1m', ['/bin/bash'], app, cfg, 'RANK0_HOST');
 * ```
 */
export function lsfScript(
  appId: string,
  cmd: readonly string[],
  app: AppDef,
  cfg: LsfOpts,
  rank0Host: string,
): string {
  const bsubs: string[] = [];
  let headJobName = '';
  app.roles.forEach((role, roleIdx) => {
    for (let replicaId = 0; replicaId < role.numReplicas; replicaId++) {
      const replicaRole = applyMacros(role, {
        imgRoot: '',
        appId,
        replicaId: String(replicaId),
        rank0Env: LSF_RANK0_ENV,
      });
      replicaRole.env[LSF_RANK0_ENV] = rank0Host;
      const jobName = `${appId}-${cleanupStr(`${role.name}-${replicaId}`)}`;
      bsubs.push(bsub(appId, jobName, replicaRole, cfg, headJobName, rank0Host));
      if (roleIdx === 0 && replicaId === 0) headJobName = jobName;
    }
  });
  const header =
    '#!/bin/bash\n#\n' +
    `# Generated by TorchX ${LSF_TORCHX_VERSION}\n` +
    `# Run with: ${cmd.map(shellQuote).join(' ')}\n#\n`;
  return `${header}${bsubs.join('\n')}\n`;
}

/**
 * Translates an app into the `lsf` request (TorchX `LsfScheduler._submit_dryrun` and `LsfBsub.materialize`).
 * Pure: no LSF command runs; the first replica's host is the placeholder {@link RANK0_HOST_PLACEHOLDER}.
 */
export function translateLsfApp(
  app: AppDef,
  cfg: LsfOpts,
  uniqueNamer: LsfUniqueNamer = (name) => makeUnique(name),
): LsfRequest {
  const appId = cleanupStr(uniqueNamer(app.name));
  const cmd = ['/bin/bash'];
  return { appId, cmd, jobdir: cfg.jobdir, script: lsfScript(appId, cmd, app, cfg, RANK0_HOST_PLACEHOLDER) };
}
