import { describe, expect, it } from 'vitest';
import {
  ComponentArgumentError,
  componentNames,
  DEFAULT_IMAGE,
  describeComponents,
  MAX_PROCS_PER_NODE,
  materializeComponent,
  parseMounts,
  parseNnodes,
  parseStructuredName,
  UnknownComponentError,
} from '../../../lib/components/index.js';
import {
  applyMacros,
  EFA_DEVICE,
  MAX_REPLICAS,
  shellQuote,
  ValidationError,
} from '../../../lib/specs/index.js';

describe('dist.ddp', () => {
  it('builds the torchrun command for -j 2x8 with script args after --', () => {
    const app = materializeComponent('dist.ddp', [
      '-j',
      '2x8',
      '--script',
      'main.py',
      '--',
      '--epochs',
      '10',
    ]);
    const role = app.roles[0]!;
    expect(app.name).toBe('main');
    expect(role.name).toBe('main');
    expect(role.entrypoint).toBe('bash');
    expect(role.numReplicas).toBe(2);
    expect(role.minReplicas).toBe(2);
    expect(role.image).toBe(DEFAULT_IMAGE);
    expect(role.args).toEqual([
      '-c',
      "torchrun --rdzv_backend c10d --rdzv_endpoint $${${rank0_env}:=localhost}:29500 --rdzv_id '${app_id}' " +
        "--nnodes 2 --nproc_per_node 8 --tee 3 --role '' main.py --epochs 10",
    ]);
    expect(role.portMap).toEqual({ c10d: 29500 });
    expect(role.resource).toEqual({ cpu: 2, gpu: 0, memMB: 1024, capabilities: {}, devices: {} });
    expect(role.env).toEqual({
      TORCHX_TRACKING_EXPERIMENT_NAME: 'default-experiment',
      TORCHX_TRACKING_RUN_NAME: 'main',
      LOGLEVEL: 'WARNING',
    });
  });

  it('renders the Batch rendezvous endpoint once macros are applied', () => {
    const role = materializeComponent('dist.ddp', ['-j', '2x8', '--script', 'main.py']).roles[0]!;
    const resolved = applyMacros(role, {
      imgRoot: '',
      appId: 'main-t4rcs9x6sv1m',
      replicaId: '$AWS_BATCH_JOB_NODE_INDEX',
      rank0Env: 'AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS',
    });
    expect(resolved.args[1]).toBe(
      'torchrun --rdzv_backend c10d --rdzv_endpoint ${AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS:=localhost}:29500 ' +
        "--rdzv_id 'main-t4rcs9x6sv1m' --nnodes 2 --nproc_per_node 8 --tee 3 --role '' main.py",
    );
  });

  it('treats a bare -j 4 as 1 node x 4 processes on localhost:0', () => {
    const role = materializeComponent('dist.ddp', ['-j', '4', '-m', 'pkg.train']).roles[0]!;
    expect(role.numReplicas).toBe(1);
    expect(role.name).toBe('train');
    expect(role.args[1]).toContain('--rdzv_endpoint localhost:0');
    expect(role.args[1]).toContain('--nnodes 1 --nproc_per_node 4');
    expect(role.args[1]).toMatch(/ -m pkg\.train$/);
  });

  it('supports elastic -j 2:4x8', () => {
    const role = materializeComponent('dist.ddp', ['-j', '2:4x8', '--script', 't.py']).roles[0]!;
    expect(role.minReplicas).toBe(2);
    expect(role.numReplicas).toBe(4);
    expect(role.args[1]).toContain('--nnodes 2:4 --nproc_per_node 8');
  });

  it('adds the static node rank and rdzv_conf when asked', () => {
    const cmd = materializeComponent('dist.ddp', [
      '-j',
      '2x1',
      '--script',
      't.py',
      '--rdzv_backend',
      'static',
      '--rdzv_conf',
      'timeout=600',
      '--rdzv_port',
      '1234',
    ]).roles[0]!.args[1];
    expect(cmd).toBe(
      'torchrun --rdzv_backend static --rdzv_conf timeout=600 --rdzv_endpoint $${${rank0_env}:=localhost}:1234 ' +
        "--rdzv_id '${app_id}' --nnodes 2 --nproc_per_node 1 --tee 3 --role '' --node_rank '${replica_id}' t.py",
    );
  });

  it('uses the named resource of -h over cpu/gpu/memMB', () => {
    const role = materializeComponent('dist.ddp', [
      '-h',
      'aws_p4d.24xlarge',
      '--cpu',
      '4',
      '--script',
      't.py',
    ]).roles[0]!;
    expect(role.resource.gpu).toBe(8);
    expect(role.resource.devices).toEqual({ [EFA_DEVICE]: 4 });
  });

  it('parses name, env, debug, mounts and max_retries', () => {
    const app = materializeComponent('dist.ddp', [
      '--name',
      'exp/run1',
      '--script',
      'train.py',
      '--env',
      'A=1,B=x;y',
      '--debug',
      'True',
      '--mounts',
      'type=bind,src=/data,dst=/data,readonly',
      '--max_retries',
      '3',
    ]);
    const role = app.roles[0]!;
    expect(app.name).toBe('run1');
    expect(role.env).toMatchObject({
      A: '1',
      B: 'x;y',
      TORCHX_TRACKING_EXPERIMENT_NAME: 'exp',
      TORCHX_TRACKING_RUN_NAME: 'run1',
      TORCH_DISTRIBUTED_DEBUG: 'DETAIL',
    });
    expect(role.mounts).toEqual([{ type: 'bind', srcPath: '/data', dstPath: '/data', readOnly: true }]);
    expect(role.maxRetries).toBe(3);
  });

  it('shell-quotes script args with spaces', () => {
    const cmd = materializeComponent('dist.ddp', ['--script', 't.py', '--', '--msg', 'a b', "it's"]).roles[0]!
      .args[1];
    expect(cmd).toMatch(/t\.py --msg 'a b' 'it'"'"'s'$/);
  });

  it('rejects both or neither of --script and -m', () => {
    expect(() => materializeComponent('dist.ddp', [])).toThrow(ValidationError);
    expect(() => materializeComponent('dist.ddp', ['--script', 'a.py', '-m', 'b'])).toThrow(
      /exactly one of --script and -m/,
    );
  });

  it('rejects a malformed -j with the usage example', () => {
    expect(() => materializeComponent('dist.ddp', ['-j', '2x', '--script', 't.py'])).toThrow(
      'Invalid format for -j, usage example: 1:2x4 or 1x4 or 4. Given: 2x',
    );
  });
});

describe('dist.spmd', () => {
  it('infers processes per node from the GPU count of -h for a bare -j', () => {
    const role = materializeComponent('dist.spmd', ['-j', '2', '-h', 'aws_p4d.24xlarge', '--script', 't.py'])
      .roles[0]!;
    expect(role.numReplicas).toBe(2);
    expect(role.args[1]).toContain('--nnodes 2 --nproc_per_node 8');
  });

  it('defaults to gpu.small and 1x1', () => {
    const role = materializeComponent('dist.spmd', ['-m', 'a.b']).roles[0]!;
    expect(role.resource.gpu).toBe(1);
    expect(role.args[1]).toContain('--nnodes 1 --nproc_per_node 1');
  });

  it('refuses a bare -j on a host without GPUs', () => {
    expect(() =>
      materializeComponent('dist.spmd', ['-j', '2', '-h', 'aws_trn1.32xlarge', '--script', 't.py']),
    ).toThrow(
      /nproc_per_node cannot be inferred from GPU count\. `aws_trn1\.32xlarge` is not a GPU instance/,
    );
  });
});

describe('utils components', () => {
  it('utils.echo echoes hello world by default', () => {
    const app = materializeComponent('utils.echo', []);
    expect(app.name).toBe('echo');
    expect(app.roles[0]).toMatchObject({
      name: 'echo',
      entrypoint: 'echo',
      args: ['hello world'],
      numReplicas: 1,
    });
    expect(app.roles[0]!.resource).toMatchObject({ cpu: 1, gpu: 0, memMB: 1024 });
  });

  it('utils.sh quotes each argument into one sh -c command', () => {
    const role = materializeComponent('utils.sh', ['echo', 'a b', '$HOME']).roles[0]!;
    expect(role.entrypoint).toBe('sh');
    expect(role.args).toEqual(['-c', "echo 'a b' '$HOME'"]);
    expect(role.env).toEqual({ LOGLEVEL: 'WARNING' });
  });

  it('utils.sh with --entrypoint passes the quoted args as they are', () => {
    const role = materializeComponent('utils.sh', ['--entrypoint', 'bash', '--', '-c', 'echo hi']).roles[0]!;
    expect(role.entrypoint).toBe('bash');
    expect(role.args).toEqual(['-c', "'echo hi'"]);
  });

  it('utils.python runs a module and sets HYDRA_MAIN_MODULE', () => {
    const app = materializeComponent('utils.python', ['-m', 'foo.main', '--', '--lr', '0.1']);
    expect(app.name).toBe('torchx_utils_python');
    expect(app.roles[0]).toMatchObject({
      name: 'python',
      entrypoint: 'python',
      args: ['-m', 'foo.main', '--lr', '0.1'],
      env: { HYDRA_MAIN_MODULE: 'foo.main' },
    });
  });

  it('utils.python wants exactly one of -m, -c, --script', () => {
    expect(() => materializeComponent('utils.python', ['-c', 'print(1)', '--script', 'a.py'])).toThrow(
      'exactly one of `-m`, `-c` and `--script` needs to be specified',
    );
  });

  it('utils.touch requires --file', () => {
    expect(() => materializeComponent('utils.touch', [])).toThrow(ComponentArgumentError);
    expect(() => materializeComponent('utils.touch', [])).toThrow(
      /--file: the following arguments are required/,
    );
    expect(materializeComponent('utils.touch', ['--file', '/tmp/x']).roles[0]!.args).toEqual(['/tmp/x']);
  });

  it('utils.copy runs the copy app', () => {
    const app = materializeComponent('utils.copy', ['--src', 's3://a/b', '--dst', '/tmp/b']);
    expect(app.name).toBe('torchx-utils-copy');
    expect(app.roles[0]!.args).toEqual([
      '-m',
      'torchx.apps.utils.copy_main',
      '--src',
      's3://a/b',
      '--dst',
      '/tmp/b',
    ]);
  });

  it('utils.binary uses image <NONE>', () => {
    const role = materializeComponent('utils.binary', ['--entrypoint', '/bin/date', '--', '-u']).roles[0]!;
    expect(role).toMatchObject({ name: 'binary', image: '<NONE>', entrypoint: '/bin/date', args: ['-u'] });
  });
});

describe('component argument parser', () => {
  it('accepts --name=value and unique prefixes of long options', () => {
    const app = materializeComponent('utils.echo', ['--msg=hi there', '--num_rep', '2']);
    expect(app.roles[0]).toMatchObject({ args: ['hi there'], numReplicas: 2 });
  });

  it('names an unknown option and lists the accepted ones', () => {
    expect(() => materializeComponent('utils.echo', ['--mesage', 'x'])).toThrow(
      /utils\.echo: argument --mesage: unrecognized argument; utils\.echo accepts --msg, --image, --num_replicas/,
    );
  });

  it('rejects an ambiguous prefix', () => {
    expect(() => materializeComponent('dist.ddp', ['--rdzv', 'x', '--script', 't.py'])).toThrow(
      /ambiguous option/,
    );
  });

  it('names a bad int value', () => {
    expect(() => materializeComponent('utils.echo', ['--num_replicas', 'two'])).toThrow(
      "utils.echo: argument --num_replicas: invalid int value: 'two'",
    );
  });

  it('rejects a missing value', () => {
    expect(() => materializeComponent('utils.echo', ['--msg'])).toThrow(
      'utils.echo: argument --msg: expected one argument',
    );
  });

  it('rejects positional arguments for a component without *args', () => {
    expect(() => materializeComponent('utils.echo', ['stray'])).toThrow(/takes no positional arguments/);
  });

  it('raises UnknownComponentError with the closest name, listing the builtins once', () => {
    expect(() => materializeComponent('utils.ech', [])).toThrow(
      /^unknown component 'utils.ech'; did you mean utils.echo\? Builtins are: .*utils\.echo/,
    );
    try {
      materializeComponent('utils.ech', []);
    } catch (e) {
      const error = e as UnknownComponentError;
      expect(error.message).toContain(error.issues[0]?.message ?? '<none>');
      expect(error.message.match(/utils\.sh/g)).toHaveLength(1);
    }
    expect(() => materializeComponent('dist.nope', [])).toThrow(UnknownComponentError);
    expect(() => materializeComponent('dist.nope', [])).toThrow(/dist\.ddp, dist\.spmd, utils\.echo/);
  });
});

describe('registry', () => {
  it('lists every builtin with its arguments', () => {
    expect(componentNames()).toEqual([
      'dist.ddp',
      'dist.spmd',
      'utils.echo',
      'utils.sh',
      'utils.python',
      'utils.touch',
      'utils.copy',
      'utils.binary',
    ]);
    const ddp = describeComponents().find((c) => c.name === 'dist.ddp')!;
    expect(ddp.args.find((a) => a.name === 'j')).toEqual({
      name: 'j',
      flags: ['-j', '--j'],
      type: 'str',
      default: '1x2',
      required: false,
      help: expect.stringContaining('nproc_per_node'),
    });
    expect(describeComponents().find((c) => c.name === 'utils.touch')!.args[0]!.required).toBe(true);
  });
});

describe('helpers', () => {
  it.each([
    ['2:4x8', { minNnodes: 2, maxNnodes: 4, nprocPerNode: 8, nnodesRep: '2:4' }],
    ['2x8', { minNnodes: 2, maxNnodes: 2, nprocPerNode: 8, nnodesRep: '2' }],
    ['4', { minNnodes: 1, maxNnodes: 1, nprocPerNode: 4, nnodesRep: '1' }],
  ])('parseNnodes(%s)', (j, expected) => {
    expect(parseNnodes(j)).toEqual(expected);
  });

  it.each([
    ['foo/bar', undefined, 'bar/baz.py', 'foo', 'bar'],
    ['foo/', undefined, 'bar/baz.py', 'foo', 'baz'],
    ['/bar', undefined, 'bar/baz.py', 'default-experiment', 'bar'],
    ['foobar', 'foo.bar', undefined, 'default-experiment', 'foobar'],
    ['foo/', 'foo.bar.baz', undefined, 'foo', 'baz'],
    ['a/b/c', 'm', undefined, 'a', 'b/c'],
  ])('parseStructuredName(%s)', (name, m, script, experimentName, runName) => {
    expect(parseStructuredName(name, m, script)).toEqual({ experimentName, runName });
  });

  it('shellQuote matches Python shlex.quote', () => {
    expect(shellQuote('')).toBe("''");
    expect(shellQuote('abc-./:=@%+,')).toBe('abc-./:=@%+,');
    expect(shellQuote('a b')).toBe("'a b'");
    expect(shellQuote("a'b")).toBe(`'a'"'"'b'`);
  });

  it('parseMounts handles every type and its errors', () => {
    expect(
      parseMounts([
        'type=volume,src=fs-1,dst=/efs',
        'type=device,src=/dev/fuse',
        'type=device,source=/dev/x,destination=/dev/y,perm=rw',
      ]),
    ).toEqual([
      { type: 'volume', src: 'fs-1', dstPath: '/efs', readOnly: false },
      { type: 'device', srcPath: '/dev/fuse', dstPath: '/dev/fuse', permissions: 'rwm' },
      { type: 'device', srcPath: '/dev/x', dstPath: '/dev/y', permissions: 'rw' },
    ]);
    expect(() => parseMounts(['src=/a,type=bind'])).toThrow(/type must be specified first/);
    expect(() => parseMounts(['type=tmpfs,src=a,dst=b'])).toThrow(
      "invalid mount type 'tmpfs', must be one of ['bind', 'volume', 'device']",
    );
    expect(() => parseMounts(['type=bind,src=/a,dest=/b'])).toThrow(/unknown mount option 'dest'/);
  });
});

describe('replica bounds of components', () => {
  function errorOf(fn: () => unknown): ValidationError {
    try {
      fn();
    } catch (e) {
      if (e instanceof ValidationError) return e;
      throw e;
    }
    throw new Error('expected a ValidationError');
  }

  it.each([
    ['1000000x1', 'the node count must be from 1 to 10000'],
    ['1:1000000x1', 'the node count must be from 1 to 10000'],
    ['0x8', 'the node count must be from 1 to 10000'],
    ['99999999999999999999x1', 'the node count must be from 1 to 10000'],
    ['4:2x8', 'the minimum node count must not exceed the maximum'],
    ['2x100000', `the processes per node must be from 1 to ${MAX_PROCS_PER_NODE}`],
    ['0', `the processes per node must be from 1 to ${MAX_PROCS_PER_NODE}`],
  ])('dist.ddp refuses -j %s, naming -j', (j, problem) => {
    const error = errorOf(() => materializeComponent('dist.ddp', ['-j', j, '--script', 'train.py']));
    expect(error.issues).toEqual([{ path: 'args.j', message: expect.stringContaining(problem) }]);
    expect(error.issues[0]?.message).toContain(`-j ${j}`);
  });

  it('dist.spmd refuses a -j whose node count is past the cap', () => {
    const error = errorOf(() => materializeComponent('dist.spmd', ['-j', '20000', '--script', 't.py']));
    expect(error.issues[0]?.path).toBe('args.j');
  });

  it(`accepts exactly ${MAX_REPLICAS} nodes`, () => {
    const app = materializeComponent('dist.ddp', ['-j', `${MAX_REPLICAS}x1`, '--script', 'train.py']);
    expect(app.roles[0]?.numReplicas).toBe(MAX_REPLICAS);
  });

  it.each(['utils.echo', 'utils.sh', 'utils.python', 'utils.binary'])(
    '%s refuses --num_replicas past the cap, naming it',
    (component) => {
      const base: Record<string, string[]> = {
        'utils.echo': [],
        'utils.sh': ['--', 'true'],
        'utils.python': ['-c', 'pass'],
        'utils.binary': ['--entrypoint', 'true'],
      };
      const tail = base[component] ?? [];
      for (const value of [String(MAX_REPLICAS + 1), '0', '99999999999999999999']) {
        const error = errorOf(() => materializeComponent(component, ['--num_replicas', value, ...tail]));
        expect(error).toBeInstanceOf(ComponentArgumentError);
        expect(error.issues[0]?.message).toMatch(/^--num_replicas: /);
      }
    },
  );
});
