/**
 * Utility components (TorchX `torchx.components.utils`): `utils.echo`, `utils.touch`, `utils.sh`,
 * `utils.python`, `utils.copy`, `utils.binary`.
 *
 * @module
 */
import { type AppDef, makeResource, makeRole, NONE, shellQuote, ValidationError } from '../specs/index.js';
import type { ComponentArgs } from './args.js';
import { DEFAULT_IMAGE, REPLICA_RANGE, resourceFrom } from './common.js';
import type { ComponentDefinition } from './definition.js';
import { parseMounts } from './mounts.js';

/** The resource of the utilities that need little: 1 cpu, 1 GiB. */
const smallResource = () => makeResource({ cpu: 1, gpu: 0, memMB: 1024 });
/** An app of one role named as the command it runs, `command args`, on {@link smallResource}. */
const smallApp = (command: string, image: string, args: string[], numReplicas: number): AppDef => ({
  name: command,
  metadata: {},
  roles: [
    makeRole({
      name: command,
      image,
      entrypoint: command,
      args,
      numReplicas,
      resource: smallResource(),
    }),
  ],
});
const mountsOf = (mounts: string[] | undefined) => (mounts && mounts.length > 0 ? parseMounts(mounts) : []);
/** The resource of `resourceParams`: the named one (`h`), else cpu, gpu and memMB. */
const resourceOf = (a: ComponentArgs) =>
  resourceFrom(a.num('cpu'), a.num('gpu'), a.num('memMB'), a.optStr('h'));
/** The replicas, resource and mounts of a role whose component takes them (`utils.sh`, `utils.python`). */
const replicasOf = (a: ComponentArgs) => ({
  numReplicas: a.num('num_replicas'),
  resource: resourceOf(a),
  mounts: mountsOf(a.list('mounts')),
});

const resourceParams = [
  { name: 'cpu', type: 'int', default: 1, help: 'number of cpus per replica' },
  { name: 'gpu', type: 'int', default: 0, help: 'number of gpus per replica' },
  { name: 'memMB', type: 'int', default: 1024, help: 'cpu memory in MB per replica' },
  { name: 'h', type: 'str', default: null, help: 'a named resource (takes precedence over cpu, gpu, memMB)' },
] as const;
const replicasParam = {
  name: 'num_replicas',
  type: 'int',
  default: 1,
  range: REPLICA_RANGE,
  help: 'number of replicas to run',
} as const;
const mountsParam = {
  name: 'mounts',
  type: 'list',
  default: null,
  help: 'mounts, e.g. type=bind,src=/host,dst=/job[,readonly]',
} as const;

/** `utils.echo`: echoes a message to stdout. */
export const echoComponent: ComponentDefinition = {
  name: 'utils.echo',
  description: 'Echoes a message to stdout (calls echo).',
  params: [
    { name: 'msg', type: 'str', default: 'hello world', help: 'message to echo' },
    { name: 'image', type: 'str', default: DEFAULT_IMAGE, help: 'image to use' },
    replicasParam,
  ],
  build: (a) => smallApp('echo', a.str('image'), [a.str('msg')], a.num('num_replicas')),
};

/** `utils.touch`: creates a file. */
export const touchComponent: ComponentDefinition = {
  name: 'utils.touch',
  description: 'Touches a file (calls touch).',
  params: [
    { name: 'file', type: 'str', help: 'file to create' },
    { name: 'image', type: 'str', default: DEFAULT_IMAGE, help: 'the image to use' },
  ],
  build: (a) => smallApp('touch', a.str('image'), [a.str('file')], 1),
};

/** `utils.sh`: runs a command through `sh -c` (arguments are shell-quoted). */
export const shComponent: ComponentDefinition = {
  name: 'utils.sh',
  description: 'Runs the given command via sh -c (each argument is quoted, so no variable substitution).',
  params: [
    { name: 'image', type: 'str', default: DEFAULT_IMAGE, help: 'image to use' },
    replicasParam,
    ...resourceParams,
    { name: 'env', type: 'dict', default: null, help: 'environment variables (e.g. ENV1=v1,ENV2=v2)' },
    { name: 'max_retries', type: 'int', default: 0, help: 'the number of scheduler retries allowed' },
    mountsParam,
    {
      name: 'entrypoint',
      type: 'str',
      default: null,
      help: 'the entrypoint to use for the command (defaults to sh)',
    },
  ],
  varargs: { name: 'args', help: 'the command and its arguments' },
  build(a, context) {
    const escaped = a.varargs.map(shellQuote);
    const env = a.dict('env') ?? {};
    if (env.LOGLEVEL === undefined) env.LOGLEVEL = context.env?.LOGLEVEL ?? 'WARNING';
    const entrypoint = a.optStr('entrypoint');
    return {
      name: 'sh',
      metadata: {},
      roles: [
        makeRole({
          name: 'sh',
          image: a.str('image'),
          entrypoint: entrypoint ?? 'sh',
          args: entrypoint !== undefined ? escaped : ['-c', escaped.join(' ')],
          ...replicasOf(a),
          env,
          maxRetries: a.num('max_retries'),
        }),
      ],
    };
  },
};

/** `utils.python`: runs `python` with a module (`-m`), a command (`-c`) or a script. */
export const pythonComponent: ComponentDefinition = {
  name: 'utils.python',
  description:
    'Runs python with the given module (-m), command (-c) or script (--script); use -- before program arguments.',
  params: [
    { name: 'm', type: 'str', default: null, help: 'run library module as a script' },
    { name: 'c', type: 'str', default: null, help: 'program passed as string' },
    { name: 'script', type: 'str', default: null, help: '.py script to run' },
    { name: 'image', type: 'str', default: DEFAULT_IMAGE, help: 'image to run on' },
    { name: 'name', type: 'str', default: 'torchx_utils_python', help: 'name of the job' },
    ...resourceParams,
    {
      name: 'num_replicas',
      type: 'int',
      range: REPLICA_RANGE,
      default: 1,
      help: 'number of copies to run (each on its own container)',
    },
    mountsParam,
  ],
  varargs: { name: 'args', help: 'arguments passed to the program in sys.argv[1:] (ignored with -c)' },
  build(a) {
    const m = a.optStr('m');
    const c = a.optStr('c');
    const script = a.optStr('script');
    if ([m, c, script].filter((v) => v !== undefined).length !== 1) {
      throw ValidationError.forField(
        'args',
        'exactly one of `-m`, `-c` and `--script` needs to be specified',
      );
    }
    const cmd = script !== undefined ? [script] : m !== undefined ? ['-m', m] : ['-c', c as string];
    return {
      name: a.str('name'),
      metadata: {},
      roles: [
        makeRole({
          name: 'python',
          image: a.str('image'),
          entrypoint: 'python',
          ...replicasOf(a),
          args: [...cmd, ...a.varargs],
          env: m !== undefined ? { HYDRA_MAIN_MODULE: m } : {},
        }),
      ],
    };
  },
};

/** `utils.copy`: copies a file between fsspec URLs with TorchX's copy app. */
export const copyComponent: ComponentDefinition = {
  name: 'utils.copy',
  description:
    'Copies the file from src to dst (any fsspec URL) with torchx.apps.utils.copy_main; no directories.',
  params: [
    { name: 'src', type: 'str', help: 'the source fsspec file location' },
    { name: 'dst', type: 'str', help: 'the destination fsspec file location' },
    { name: 'image', type: 'str', default: DEFAULT_IMAGE, help: 'the image that contains the copy app' },
    mountsParam,
  ],
  build: (a) => ({
    name: 'torchx-utils-copy',
    metadata: {},
    roles: [
      makeRole({
        name: 'torchx-utils-copy',
        image: a.str('image'),
        entrypoint: 'python',
        args: ['-m', 'torchx.apps.utils.copy_main', '--src', a.str('src'), '--dst', a.str('dst')],
        resource: smallResource(),
        mounts: mountsOf(a.list('mounts')),
      }),
    ],
  }),
};

/** `utils.binary`: runs a binary already on the host (image `<NONE>`). */
export const binaryComponent: ComponentDefinition = {
  name: 'utils.binary',
  description: 'Runs the given entrypoint binary with the positional arguments (image <NONE>).',
  params: [
    { name: 'entrypoint', type: 'str', help: 'the binary to run' },
    { name: 'name', type: 'str', default: 'torchx_utils_binary', help: 'name of the job' },
    {
      name: 'num_replicas',
      type: 'int',
      range: REPLICA_RANGE,
      default: 1,
      help: 'number of copies to run (each on its own container)',
    },
    ...resourceParams,
  ],
  varargs: { name: 'args', help: 'arguments passed to the program' },
  build: (a) => ({
    name: a.str('name'),
    metadata: {},
    roles: [
      makeRole({
        name: 'binary',
        image: NONE,
        entrypoint: a.str('entrypoint'),
        numReplicas: a.num('num_replicas'),
        args: [...a.varargs],
        resource: resourceOf(a),
      }),
    ],
  }),
};
