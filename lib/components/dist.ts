/**
 * Distributed components: `dist.ddp` (torchrun, one role, `-j [min:]NxM`) and `dist.spmd` (ddp with the
 * process count inferred from the host's GPUs).
 *
 * @module
 */
import {
  type AppDef,
  MAX_REPLICAS,
  macros,
  makeRole,
  namedResource,
  shellQuote,
  ValidationError,
} from '../specs/index.js';
import { DEFAULT_IMAGE, moduleLeaf, parseStructuredName, pathStem, resourceFrom } from './common.js';
import type { ComponentDefinition } from './definition.js';
import { parseMounts } from './mounts.js';

/** Environment variables `--debug` adds (TorchX `_TORCH_DEBUG_FLAGS`). */
export const TORCH_DEBUG_FLAGS: Readonly<Record<string, string>> = {
  CUDA_LAUNCH_BLOCKING: '1',
  NCCL_DESYNC_DEBUG: '1',
  TORCH_DISTRIBUTED_DEBUG: 'DETAIL',
  TORCH_SHOW_CPP_STACKTRACES: '1',
};

/** Node and process counts parsed from `-j`. */
export interface NNodes {
  minNnodes: number;
  maxNnodes: number;
  nprocPerNode: number;
  /** What torchrun's `--nnodes` gets: `2` or `2:4`. */
  nnodesRep: string;
}

/**
 * Parses `-j`: `2:4x8` (elastic 2 to 4 nodes × 8), `2x8` (2 nodes × 8), or a bare `4` (1 node × 4 processes).
 *
 * @throws ValidationError with TorchX's usage message for anything else.
 * @example
 * ```ts
 * parseNnodes('2:4x8'); // { minNnodes: 2, maxNnodes: 4, nprocPerNode: 8, nnodesRep: '2:4' }
 * parseNnodes('4');     // { minNnodes: 1, maxNnodes: 1, nprocPerNode: 4, nnodesRep: '1' }
 * ```
 */
export function parseNnodes(j: string): NNodes {
  let m = /^(\d+):(\d+)x(\d+)$/.exec(j);
  if (m) {
    return checkedNnodes(j, {
      minNnodes: Number(m[1]),
      maxNnodes: Number(m[2]),
      nprocPerNode: Number(m[3]),
      nnodesRep: `${m[1]}:${m[2]}`,
    });
  }
  m = /^(\d+)x(\d+)$/.exec(j);
  if (m)
    return checkedNnodes(j, {
      minNnodes: Number(m[1]),
      maxNnodes: Number(m[1]),
      nprocPerNode: Number(m[2]),
      nnodesRep: `${m[1]}`,
    });
  m = /^(\d+)$/.exec(j);
  if (m) return checkedNnodes(j, { minNnodes: 1, maxNnodes: 1, nprocPerNode: Number(m[1]), nnodesRep: '1' });
  throw ValidationError.forField(
    'args.j',
    `Invalid format for -j, usage example: 1:2x4 or 1x4 or 4. Given: ${j}`,
  );
}

/** Most worker processes torchrun starts on one node (`-j NxM`'s M): beyond any host's cores or GPUs. */
export const MAX_PROCS_PER_NODE = 1_024;

/** `nnodes` within `-j`'s bounds: 1 to {@link MAX_REPLICAS} nodes, min ≤ max, 1 to {@link MAX_PROCS_PER_NODE} processes. */
function checkedNnodes(j: string, n: NNodes): NNodes {
  const problem =
    n.minNnodes < 1 || n.maxNnodes > MAX_REPLICAS
      ? `the node count must be from 1 to ${MAX_REPLICAS}`
      : n.minNnodes > n.maxNnodes
        ? 'the minimum node count must not exceed the maximum'
        : n.nprocPerNode < 1 || n.nprocPerNode > MAX_PROCS_PER_NODE
          ? `the processes per node must be from 1 to ${MAX_PROCS_PER_NODE}`
          : undefined;
  if (problem === undefined) return n;
  throw ValidationError.forField('args.j', `-j ${j}: ${problem} (e.g. -j 2x8 or -j 1:4x8)`);
}

/** A value spliced into the shell command unquoted (TorchX `_noquote`). */
class Unquoted {
  constructor(readonly value: string) {}
}

function joinCommand(parts: readonly (string | Unquoted)[]): string {
  return parts.map((p) => (p instanceof Unquoted ? p.value : shellQuote(p))).join(' ');
}

/** Inputs of {@link ddpAppDef} (the `dist.ddp` parameters). */
export interface DdpOptions {
  scriptArgs: readonly string[];
  script?: string;
  m?: string;
  image: string;
  name: string;
  h?: string;
  cpu: number;
  gpu: number;
  memMB: number;
  j: string;
  env: Record<string, string>;
  maxRetries: number;
  rdzvPort: number;
  rdzvBackend: string;
  rdzvConf?: string;
  mounts?: string[];
  debug: boolean;
  tee: number;
  /** `LOGLEVEL` default when env does not set it (TorchX reads the caller's process env, else WARNING). */
  logLevel: string;
}

/**
 * Builds the `dist.ddp` AppDef: one role running `bash -c "torchrun ..."` on `max_nnodes` replicas.
 *
 * @example
 * ```ts
 * const app = materializeComponent('dist.ddp', ['-j', '2x8', '--script', 'train.py', '--', '--epochs', '10']);
 * ```
 */
export function ddpAppDef(o: DdpOptions): AppDef {
  if ((o.script === undefined) === (o.m === undefined)) {
    throw ValidationError.forField('args', 'exactly one of --script and -m must be specified');
  }
  const { minNnodes, maxNnodes, nprocPerNode, nnodesRep } = parseNnodes(o.j);
  const rdzvEndpoint =
    maxNnodes === 1 ? 'localhost:0' : new Unquoted(`$\${${macros.rank0Env}:=localhost}:${o.rdzvPort}`);
  const env = { ...o.env };
  const argname = parseStructuredName(o.name, o.m, o.script);
  env.TORCHX_TRACKING_EXPERIMENT_NAME = argname.experimentName;
  env.TORCHX_TRACKING_RUN_NAME = argname.runName;
  if (env.LOGLEVEL === undefined) env.LOGLEVEL = o.logLevel;
  if (o.debug) Object.assign(env, TORCH_DEBUG_FLAGS);

  const cmd: (string | Unquoted)[] = [
    'torchrun',
    '--rdzv_backend',
    o.rdzvBackend,
    ...(o.rdzvConf !== undefined ? ['--rdzv_conf', o.rdzvConf] : []),
    '--rdzv_endpoint',
    rdzvEndpoint,
    '--rdzv_id',
    macros.appId,
    '--nnodes',
    nnodesRep,
    '--nproc_per_node',
    String(nprocPerNode),
    '--tee',
    String(o.tee),
    '--role',
    '',
  ];
  if (o.rdzvBackend === 'static') cmd.push('--node_rank', macros.replicaId);
  if (o.script !== undefined) cmd.push(o.script);
  else cmd.push('-m', o.m as string);
  cmd.push(...o.scriptArgs);

  const role = makeRole({
    name: o.script !== undefined ? pathStem(o.script) : moduleLeaf(o.m as string),
    image: o.image,
    minReplicas: minNnodes,
    entrypoint: 'bash',
    numReplicas: maxNnodes,
    resource: resourceFrom(o.cpu, o.gpu, o.memMB, o.h),
    args: ['-c', joinCommand(cmd)],
    env,
    portMap: { c10d: o.rdzvPort },
    maxRetries: o.maxRetries,
    mounts: o.mounts && o.mounts.length > 0 ? parseMounts(o.mounts) : [],
  });
  return { name: argname.runName, roles: [role], metadata: {} };
}

/**
 * TorchX `StructuredJArgument.parse_from`: `-j N` on a GPU host means N nodes × (GPUs per host);
 * `-j NxM` is kept as given.
 *
 * @throws ValidationError for a bare `-j N` on a host without GPUs, or a malformed `-j`.
 */
export function spmdJ(h: string, j: string): string {
  const parts = j.split('x');
  const gpus = namedResource(h, 'args.h').gpu;
  if (parts.length === 1 && /^\d+$/.test(parts[0] as string)) {
    const nnodes = Number(parts[0]);
    if (gpus > 0) return `${nnodes}x${gpus}`;
    throw ValidationError.forField(
      'args.j',
      `nproc_per_node cannot be inferred from GPU count. \`${h}\` is not a GPU instance. ` +
        `You must specify \`-j $NNODESx$NPROCS_PER_NODE\` (e.g. \`-j ${nnodes}x8\`)`,
    );
  }
  if (parts.length === 2 && /^\d+$/.test(parts[0] as string) && /^\d+$/.test(parts[1] as string)) {
    return `${Number(parts[0])}x${Number(parts[1])}`;
  }
  throw ValidationError.forField(
    'args.j',
    `Invalid format for \`-j $NNODESx$NPROCS_PER_NODE\` (e.g. \`-j 1x8\`). Given: ${j}`,
  );
}

const commonDistParams = [
  { name: 'script', type: 'str', default: null, help: 'script or binary to run within the image' },
  { name: 'm', type: 'str', default: null, help: 'the python module path to run' },
  { name: 'image', type: 'str', default: DEFAULT_IMAGE, help: 'image (e.g. docker)' },
  {
    name: 'name',
    type: 'str',
    default: '/',
    help: 'job name: {experimentname}/{runname}, {experimentname}/, /{runname} or {runname}; the run name defaults to the script or module name',
  },
] as const;

/** `dist.ddp`: distributed data parallel training with torchrun. */
export const ddpComponent: ComponentDefinition = {
  name: 'dist.ddp',
  description:
    'Distributed data parallel style application (one role, multi-replica). Uses torchrun to launch and ' +
    'coordinate PyTorch worker processes; c10d rendezvous on rank 0 of the job.',
  params: [
    ...commonDistParams,
    {
      name: 'h',
      type: 'str',
      default: null,
      help: 'a named resource (takes precedence over cpu, gpu, memMB)',
    },
    { name: 'cpu', type: 'int', default: 2, help: 'number of cpus per replica' },
    { name: 'gpu', type: 'int', default: 0, help: 'number of gpus per replica' },
    { name: 'memMB', type: 'int', default: 1024, help: 'cpu memory in MB per replica' },
    {
      name: 'j',
      type: 'str',
      default: '1x2',
      help: '[{min_nnodes}:]{nnodes}x{nproc_per_node}, or a bare {nproc_per_node}',
    },
    { name: 'env', type: 'dict', default: null, help: 'environment variables (e.g. ENV1=v1,ENV2=v2)' },
    { name: 'max_retries', type: 'int', default: 0, help: 'the number of scheduler retries allowed' },
    { name: 'rdzv_port', type: 'int', default: 29500, help: "the port on rank0's host for the c10d store" },
    { name: 'rdzv_backend', type: 'str', default: 'c10d', help: 'the rendezvous backend to use' },
    {
      name: 'rdzv_conf',
      type: 'str',
      default: null,
      help: 'additional rendezvous configuration (e.g. join_timeout=600)',
    },
    {
      name: 'mounts',
      type: 'list',
      default: null,
      help: 'mounts, e.g. type=bind,src=/host,dst=/job[,readonly]',
    },
    { name: 'debug', type: 'bool', default: false, help: 'run with preset debug flags enabled' },
    {
      name: 'tee',
      type: 'int',
      default: 3,
      help: 'tee std streams to console + file: 0 none, 1 stdout, 2 stderr, 3 both',
    },
  ],
  varargs: { name: 'script_args', help: 'arguments to the main module or script' },
  build(a, context) {
    const options: DdpOptions = {
      scriptArgs: a.varargs,
      image: a.str('image'),
      name: a.str('name'),
      cpu: a.num('cpu'),
      gpu: a.num('gpu'),
      memMB: a.num('memMB'),
      j: a.str('j'),
      env: a.dict('env') ?? {},
      maxRetries: a.num('max_retries'),
      rdzvPort: a.num('rdzv_port'),
      rdzvBackend: a.str('rdzv_backend'),
      debug: a.bool('debug'),
      tee: a.num('tee'),
      logLevel: context.env?.LOGLEVEL ?? 'WARNING',
    };
    const script = a.optStr('script');
    const m = a.optStr('m');
    const h = a.optStr('h');
    const rdzvConf = a.optStr('rdzv_conf');
    const mounts = a.list('mounts');
    if (script !== undefined) options.script = script;
    if (m !== undefined) options.m = m;
    if (h !== undefined) options.h = h;
    if (rdzvConf !== undefined) options.rdzvConf = rdzvConf;
    if (mounts !== undefined) options.mounts = mounts;
    return ddpAppDef(options);
  },
};

/** `dist.spmd`: single-program-multiple-data on named hosts; `-j N` infers processes from GPUs. */
export const spmdComponent: ComponentDefinition = {
  name: 'dist.spmd',
  description:
    'Single-Process-Multiple-Data application: launches -j NxM copies of the program (N hosts × M ' +
    'processes) with torchrun. On GPU hosts a bare -j N uses one process per GPU.',
  params: [
    ...commonDistParams,
    {
      name: 'h',
      type: 'str',
      default: 'gpu.small',
      help: 'the type of host to run on (a named resource, e.g. aws_p4d.24xlarge)',
    },
    {
      name: 'j',
      type: 'str',
      default: '1x1',
      help: '{nnodes}x{nproc_per_node}; on GPU hosts a bare {nnodes} infers nproc_per_node',
    },
    { name: 'env', type: 'dict', default: null, help: 'environment variables (e.g. ENV1=v1,ENV2=v2)' },
    { name: 'max_retries', type: 'int', default: 0, help: 'the number of scheduler retries allowed' },
    {
      name: 'mounts',
      type: 'list',
      default: null,
      help: 'mounts, e.g. type=bind,src=/host,dst=/job[,readonly]',
    },
    { name: 'debug', type: 'bool', default: false, help: 'run with preset debug flags enabled' },
  ],
  varargs: { name: 'args', help: 'the arguments to the main module or script' },
  build(a, context) {
    const h = a.str('h');
    const options: DdpOptions = {
      scriptArgs: a.varargs,
      image: a.str('image'),
      name: a.str('name'),
      h,
      cpu: 2,
      gpu: 0,
      memMB: 1024,
      j: spmdJ(h, a.str('j')),
      env: a.dict('env') ?? {},
      maxRetries: a.num('max_retries'),
      rdzvPort: 29500,
      rdzvBackend: 'c10d',
      debug: a.bool('debug'),
      tee: 3,
      logLevel: context.env?.LOGLEVEL ?? 'WARNING',
    };
    const script = a.optStr('script');
    const m = a.optStr('m');
    const mounts = a.list('mounts');
    if (script !== undefined) options.script = script;
    if (m !== undefined) options.m = m;
    if (mounts !== undefined) options.mounts = mounts;
    return ddpAppDef(options);
  },
};
