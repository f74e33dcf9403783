import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  cudaVisibleDevices,
  joinPath,
  type LocalCwdOpts,
  MAX_PLANNED_COMMAND_BYTES,
} from '../../../lib/schedulers/local-cwd/index.js';
import {
  InvalidRunConfigError,
  makeAppDef,
  makeResource,
  makeRole,
  NULL_RESOURCE,
  ValidationError,
} from '../../../lib/specs/index.js';
import { appOf, type Harness, makeHarness, shApp, TEST_PATH } from './helpers.js';

describe('LocalCwdScheduler dry run', () => {
  let h: Harness;
  let root: string;
  beforeEach(async () => {
    h = await makeHarness({ idGenerator: () => 'abc123' });
    root = path.dirname(h.dataDir);
  });
  afterEach(() => h.cleanup());

  it("gives ${replica_id} the replica's index in its role, as TorchX's local scheduler (Batch: the node index)", () => {
    const role = (name: string) =>
      makeRole({ name, image: 'unused', entrypoint: 'echo', args: ['${replica_id}'], numReplicas: 2 });
    const app = makeAppDef({ name: 'two', roles: [role('a'), role('b')] });
    const info = h.scheduler.submitDryrun(app);
    expect(info.request.replicas.map((r) => `${r.role}:${r.args[0]}`)).toEqual(['a:0', 'a:1', 'b:0', 'b:1']);
  });

  it('returns exactly the processes it will spawn, with macros applied per replica', () => {
    const app = makeAppDef({
      name: 'train',
      roles: [
        makeRole({
          name: 'trainer',
          image: 'pytorch/pytorch:latest',
          entrypoint: 'sh',
          args: ['-c', 'echo ${app_id} ${replica_id} ${img_root} $${${rank0_env}:=localhost}'],
          env: { FOO: 'bar-${replica_id}' },
          numReplicas: 2,
        }),
      ],
    });
    const info = h.scheduler.submitDryrun(app);
    const appDir = path.join(h.dataDir, 'train-abc123');
    const replica = (id: number) => {
      const dir = path.join(appDir, 'trainer', String(id));
      return {
        role: 'trainer',
        replicaId: id,
        entrypoint: 'sh',
        args: ['-c', `echo train-abc123 ${id} ${root} \${TORCHX_RANK0_HOST:=localhost}`],
        env: {
          FOO: `bar-${id}`,
          TORCHX_RANK0_HOST: 'localhost',
          TORCHX_ROLE_NAME: 'trainer',
          TORCHX_ROLE_IDX: '0',
          TORCHX_REPLICA_IDX: String(id),
          TORCHELASTIC_ERROR_FILE: path.join(dir, 'error.json'),
          PYTHONUNBUFFERED: 'x',
          PATH: `${TEST_PATH}:${root}`,
        },
        cwd: root,
        stdout: path.join(dir, 'stdout.log'),
        stderr: path.join(dir, 'stderr.log'),
        combined: path.join(dir, 'combined.log'),
      };
    };
    expect(info.request).toEqual({
      appId: 'train-abc123',
      logDir: appDir,
      inheritedEnv: ['PATH'],
      replicas: [replica(0), replica(1)],
    });
    expect(JSON.parse(JSON.stringify(info.request))).toEqual(info.request);
    expect(h.scheduler.appIdOf(info)).toBe('train-abc123');
    expect(info.cfg).toEqual({
      cwd: null,
      env: null,
      prepend_cwd: false,
      auto_set_cuda_visible_devices: false,
    });
  });

  it('is pure: it starts nothing and writes nothing', async () => {
    h.scheduler.submitDryrun(shApp('pure', 'echo hi'));
    await expect(readdir(h.dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('numbers roles in TORCHX_ROLE_IDX and keeps a role-set TORCHELASTIC_ERROR_FILE and PYTHONUNBUFFERED', () => {
    const app = makeAppDef({
      name: 'multi',
      roles: [
        makeRole({ name: 'ps', image: '.', entrypoint: 'sleep', args: ['1'] }),
        makeRole({
          name: 'trainer',
          image: '.',
          entrypoint: 'sleep',
          args: ['1'],
          env: { TORCHELASTIC_ERROR_FILE: '/tmp/mine.json', PYTHONUNBUFFERED: '0' },
        }),
      ],
    });
    const [ps, trainer] = h.scheduler.submitDryrun(app).request.replicas;
    expect(ps?.env.TORCHX_ROLE_IDX).toBe('0');
    expect(trainer?.env).toMatchObject({
      TORCHX_ROLE_IDX: '1',
      TORCHX_ROLE_NAME: 'trainer',
      TORCHELASTIC_ERROR_FILE: '/tmp/mine.json',
      PYTHONUNBUFFERED: '0',
    });
  });

  it('leaves PYTHONUNBUFFERED to the inherited environment when it sets one', async () => {
    const other = h.restart({ env: { PATH: TEST_PATH, PYTHONUNBUFFERED: '1' } });
    const [replica] = other.submitDryrun(shApp('env', 'true')).request.replicas;
    expect(replica?.env).not.toHaveProperty('PYTHONUNBUFFERED');
  });

  it('appends the working directory to PATH, or prepends it with prepend_cwd', () => {
    const app = shApp('paths', 'true');
    expect(h.scheduler.submitDryrun(app).request.replicas[0]?.env.PATH).toBe(`${TEST_PATH}:${root}`);
    expect(h.scheduler.submitDryrun(app, { prepend_cwd: true }).request.replicas[0]?.env.PATH).toBe(
      `${root}:${TEST_PATH}`,
    );
    expect(h.scheduler.submitDryrun(app, { prependCwd: true }).cfg.prepend_cwd).toBe(true);
  });

  it("builds PATH from the role's own PATH when it sets one", () => {
    const app = shApp('rolepath', 'true', { env: { PATH: '/opt/tool/bin' } });
    expect(h.scheduler.submitDryrun(app).request.replicas[0]?.env.PATH).toBe(`/opt/tool/bin:${root}`);
  });

  it('runs in the cwd option, resolved against the default working directory', async () => {
    await mkdir(path.join(root, 'project'));
    const [replica] = h.scheduler.submitDryrun(shApp('cwd', 'pwd'), { cwd: 'project' }).request.replicas;
    expect(replica?.cwd).toBe(path.join(root, 'project'));
    expect(replica?.args[1]).toBe('pwd');
  });

  it('rejects log_dir, naming the option and where logs are instead', () => {
    const run = () => h.scheduler.submitDryrun(shApp('logs', 'true'), { log_dir: '/tmp/logs' });
    expect(run).toThrow(InvalidRunConfigError);
    expect(run).toThrow(/TXS_DATA_DIR/);
    try {
      run();
    } catch (e) {
      expect((e as InvalidRunConfigError).issues[0]?.path).toBe('cfg.log_dir');
    }
  });
});

describe('cudaVisibleDevices', () => {
  const cfg = (auto: boolean): LocalCwdOpts => ({
    cwd: null,
    env: null,
    prepend_cwd: false,
    auto_set_cuda_visible_devices: auto,
  });
  const app = makeAppDef({
    name: 'gpus',
    roles: [
      makeRole({
        name: 'a',
        image: '.',
        numReplicas: 2,
        resource: makeResource({ cpu: 1, gpu: 2, memMB: 1 }),
      }),
      makeRole({
        name: 'cpu',
        image: '.',
        numReplicas: 1,
        resource: makeResource({ cpu: 1, gpu: 0, memMB: 1 }),
      }),
      makeRole({
        name: 'b',
        image: '.',
        numReplicas: 1,
        resource: makeResource({ cpu: 1, gpu: 1, memMB: 1 }),
      }),
    ],
  });

  it("gives each GPU replica its own devices, in role order (TorchX's assignment)", () => {
    const devices = cudaVisibleDevices(app, cfg(true), () => 8);
    expect(Object.fromEntries(devices)).toEqual({ 'a/0': '0,1', 'a/1': '2,3', 'b/0': '4' });
  });

  it('assigns nothing unless asked, and nothing when the machine has fewer GPUs than requested', () => {
    let asked = 0;
    expect(cudaVisibleDevices(app, cfg(false), () => asked++ + 8).size).toBe(0);
    expect(asked).toBe(0);
    expect(cudaVisibleDevices(app, cfg(true), () => 4).size).toBe(0);
  });

  it('sets CUDA_VISIBLE_DEVICES in the dry run through the injected GPU count', async () => {
    const h = await makeHarness({ gpuCount: () => 8 });
    try {
      const replicas = h.scheduler.submitDryrun(app, { auto_set_cuda_visible_devices: true }).request
        .replicas;
      expect(replicas.map((r) => r.env.CUDA_VISIBLE_DEVICES)).toEqual(['0,1', '2,3', undefined, '4']);
    } finally {
      await h.cleanup();
    }
  });
});

describe('joinPath', () => {
  it('drops empty entries and stray separators', () => {
    expect(joinPath(undefined, ':/a::/b:', '', '/c')).toBe('/a:/b:/c');
  });
});

describe('LocalCwdScheduler.validate', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(() => h.cleanup());

  const issuePath = (run: () => void): string | undefined => {
    try {
      run();
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      return (e as ValidationError).issues[0]?.path;
    }
    return undefined;
  };

  it('accepts a role without a resource, as TorchX local does', () => {
    const app = shApp('noresource', 'true', { resource: NULL_RESOURCE });
    expect(() => h.scheduler.validate(app)).not.toThrow();
  });

  it('rejects an entrypoint that is not on PATH, naming the field and the PATH searched', () => {
    const app = appOf('missing', { entrypoint: 'definitely-not-a-command-xyz' });
    expect(issuePath(() => h.scheduler.validate(app))).toBe('app.roles.0.entrypoint');
    expect(() => h.scheduler.validate(app)).toThrow(/was not found on PATH \(\/usr\/local\/bin/);
  });

  it('refuses replicas whose copies of args and env would pass MAX_PLANNED_COMMAND_BYTES, before planning them', () => {
    const arg = `\${replica_id}${'x'.repeat(10_000)}`;
    const big = appOf('big', { entrypoint: 'true', args: [arg], numReplicas: 10_000 });
    expect(issuePath(() => h.scheduler.validatedDryrun(big, {}))).toBe('app.roles.0.numReplicas');
    expect(() => h.scheduler.validate(big)).toThrow(
      /each get their own copy of its args and env, 64 MiB at most/,
    );
    const small = appOf('small', { entrypoint: 'true', args: ['${replica_id}'], numReplicas: 10_000 });
    expect(() => h.scheduler.validate(small)).not.toThrow();
    expect(MAX_PLANNED_COMMAND_BYTES).toBe(64 * 1024 * 1024);
  });

  it('rejects a missing entrypoint', () => {
    const app = makeAppDef({ name: 'x', roles: [makeRole({ name: 'worker', image: '.' })] });
    expect(issuePath(() => h.scheduler.validate(app))).toBe('app.roles.0.entrypoint');
  });

  it('finds an executable in the working directory through PATH', async () => {
    const root = path.dirname(h.dataDir);
    await writeFile(path.join(root, 'hello-tool'), '#!/bin/sh\necho hi\n');
    await chmod(path.join(root, 'hello-tool'), 0o755);
    expect(() => h.scheduler.validate(appOf('tool', { entrypoint: 'hello-tool' }))).not.toThrow();
    expect(() => h.scheduler.validate(appOf('tool', { entrypoint: './hello-tool' }))).not.toThrow();
  });

  it('rejects names that cannot be directories, duplicate roles, no replicas and a missing cwd', () => {
    expect(issuePath(() => h.scheduler.validate(shApp('../escape', 'true')))).toBe('app.name');
    const slashRole = makeAppDef({
      name: 'ok',
      roles: [makeRole({ name: 'a/b', image: '.', entrypoint: 'sh' })],
    });
    expect(issuePath(() => h.scheduler.validate(slashRole))).toBe('app.roles.0.name');
    const twice = makeAppDef({
      name: 'ok',
      roles: [
        makeRole({ name: 'a', image: '.', entrypoint: 'sh' }),
        makeRole({ name: 'a', image: '.', entrypoint: 'sh' }),
      ],
    });
    expect(issuePath(() => h.scheduler.validate(twice))).toBe('app.roles.1.name');
    expect(issuePath(() => h.scheduler.validate(shApp('none', 'true', { numReplicas: 0 })))).toBe(
      'app.roles',
    );
    expect(issuePath(() => h.scheduler.validate(shApp('cwd', 'true'), { cwd: '/does/not/exist' }))).toBe(
      'cfg.cwd',
    );
  });
});
