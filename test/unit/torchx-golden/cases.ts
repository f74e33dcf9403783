/**
 * The apps of test/fixtures/torchx-golden.py, built on this side: TorchX's builtin components through our
 * component port (with TorchX 0.8.0dev0's default image, which the port replaces with 0.7.0) and the
 * multi-role AppDef. The fixtures hold TorchX's own dry-run output for them.
 */
import { readFileSync } from 'node:fs';
import { materializeComponent } from '../../../lib/components/index.js';
import {
  type AppDef,
  type Cfg,
  makeAppDef,
  makeResource,
  makeRole,
  type RunOpts,
} from '../../../lib/specs/index.js';

/** The fixed random suffix the generator patches into TorchX's `random_id`. */
export const SUFFIX = 't4rcs9x6sv1m';
/** What the generator's `get_len_random_id(n)` returns: the first n characters of this. */
export const LEN_ALPHABET = 'bt4rcs9x6sv1mcdfghjklmnpqrstvwxz';

const IMAGE = ['--image', 'ghcr.io/pytorch/torchx:0.8.0dev0'];

function multiRole(): AppDef {
  const trainer = makeRole({
    name: 'trainer',
    image: 'ghcr.io/acme/train:1.2',
    entrypoint: 'python',
    args: [
      '-m',
      'train',
      '--app-id',
      '${app_id}',
      '--rank',
      '${replica_id}',
      '--master',
      '$${rank0_env}',
      '--price',
      '$5',
    ],
    env: { LOG_LEVEL: 'debug', RUN: '${app_id}/${replica_id}' },
    numReplicas: 2,
    minReplicas: 1,
    maxRetries: 3,
    retryPolicy: 'APPLICATION',
    resource: makeResource({
      cpu: 8,
      gpu: 2,
      memMB: 32768,
      capabilities: { 'node.kubernetes.io/instance-type': 'p4d.24xlarge' },
      devices: { 'vpc.amazonaws.com/efa': 2 },
    }),
    portMap: { c10d: 29500, tensorboard: 6006 },
    mounts: [
      { type: 'bind', srcPath: '/data/in', dstPath: '/mnt/in', readOnly: true },
      { type: 'volume', src: 'checkpoints', dstPath: '/ckpt', readOnly: false },
      { type: 'device', srcPath: '/dev/fuse', dstPath: '/dev/fuse', permissions: 'rw' },
    ],
  });
  const ps = makeRole({
    name: 'ps',
    image: 'ghcr.io/acme/ps:1.2',
    entrypoint: '/bin/sh',
    args: ['-c', 'serve --port 8080 --peer $TORCHX_RANK0_HOST'],
    env: { MODE: 'ps' },
    numReplicas: 1,
    maxRetries: 1,
    resource: makeResource({ cpu: 2, gpu: 0, memMB: 4096 }),
    portMap: { http: 8080 },
    mounts: [{ type: 'bind', srcPath: '/var/log/ps', dstPath: '/logs', readOnly: false }],
  });
  return makeAppDef({ name: 'Multi_Role.app', roles: [trainer, ps] });
}

/** Builds each fixture case's app by its title. */
export const APPS: Readonly<Record<string, () => AppDef>> = {
  'utils.echo': () => materializeComponent('utils.echo', [...IMAGE, '--msg', 'hello world']),
  'utils.sh': () =>
    materializeComponent('utils.sh', [...IMAGE, '--num_replicas', '2', 'echo', '$HOME', 'a b']),
  'dist.ddp -j 2x2': () =>
    materializeComponent('dist.ddp', [...IMAGE, '-j', '2x2', '--script', 'train.py', '--', '--epochs', '10']),
  'dist.spmd': () =>
    materializeComponent('dist.spmd', [...IMAGE, '--script', 'train.py', '--', '--lr', '0.1']),
  'multi-role': multiRole,
};

/** A run option as the generator dumps TorchX's `runopts`. */
export interface GoldenRunOpt {
  name: string;
  type: string;
  default: unknown;
  required: boolean;
  help: string;
}

/** One fixture case: the app (by title), the cfg and TorchX's request. */
export interface GoldenCase<R> {
  title: string;
  cfg: Cfg;
  app: { name: string; roles: string[] };
  request: R;
}

/** A fixture file test/fixtures/<scheduler>/golden.json. */
export interface Golden<R> {
  scheduler: string;
  run_opts: GoldenRunOpt[];
  cases: GoldenCase<R>[];
}

/** Reads test/fixtures/<scheduler>/golden.json. */
export function golden<R>(scheduler: string): Golden<R> {
  const url = new URL(`../../fixtures/${scheduler}/golden.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as Golden<R>;
}

/** Our run-option type names as TorchX's Python types print. */
export const PY_TYPE: Readonly<Record<string, string>> = {
  str: 'str',
  int: 'int',
  bool: 'bool',
  float: 'float',
  'list[str]': 'List',
  'dict[str,str]': 'Dict',
};

/** Our run options in the generator's form of TorchX's (Python type names, null for no default). */
export function asTorchxRunOpts(opts: RunOpts): GoldenRunOpt[] {
  return opts.describe().map((o) => ({
    name: o.name,
    type: PY_TYPE[o.type] ?? o.type,
    default: o.default ?? null,
    required: o.required,
    help: o.help,
  }));
}

/** The app of a fixture case (by its title). */
export function appOf(c: Pick<GoldenCase<unknown>, 'title'>): AppDef {
  const make = APPS[c.title];
  if (!make) throw new Error(`no app for fixture case ${c.title}`);
  return make();
}
