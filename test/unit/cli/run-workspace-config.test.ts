/**
 * `[cli:run] workspace` of `.txsconfig`: TorchX's way of setting the default workspace, honoured by `txs run`,
 * and confined to the directory `txs` runs from (a cloned repository's `.txsconfig` is read too).
 */
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, main } from '../../../lib/cli/index.js';
import { type FakeApi, startFakeApi } from './fake-api.js';
import { memoryIO } from './helpers.js';

let api: FakeApi;
let root: string;
let project: string;

beforeEach(async () => {
  api = await startFakeApi();
  root = await mkdtemp(join(tmpdir(), 'txs-ws-config-'));
  project = join(root, 'project');
  await mkdir(join(project, 'src'), { recursive: true });
  await writeFile(join(project, 'src', 'train.py'), 'print("hi")\n');
  await mkdir(join(root, 'secrets'));
  await writeFile(join(root, 'secrets', 'key'), 'do not ship\n');
});

afterEach(async () => {
  await api.close();
  await rm(root, { recursive: true, force: true });
});

/** `txs run --dryrun …` from the project directory, with this `.txsconfig` there. */
async function dryrunWithConfig(config: string, ...args: string[]) {
  const io = memoryIO({
    cwd: project,
    home: join(root, 'home'),
    env: { XDG_CACHE_HOME: join(root, 'cache') },
    files: { [join(project, '.txsconfig')]: config },
  });
  const code = await main(['run', '--dryrun', ...args, 'utils.sh', 'true'], {
    ...io,
    env: { TXS_ENDPOINT: api.url, ...api.ownSocketEnv, ...io.env },
  } as typeof io);
  const dryruns = api.requests.filter((r) => r.method === 'POST' && r.path === '/v1/dryrun');
  return { code, out: io.out(), err: io.errText(), dryruns };
}

describe('txs run with [cli:run] workspace', () => {
  it('packs the configured directory inside the current one and names it in the dry run request', async () => {
    const { code, out, err, dryruns } = await dryrunWithConfig('[cli:run]\nworkspace = src\n');
    expect(code, err).toBe(ExitCode.OK);
    expect(err).toContain(
      `workspace: packing ${join(project, 'src')} (workspace in [cli:run] of .txsconfig;`,
    );
    const sha256 = /workspace: ([0-9a-f]{64})/.exec(out)?.[1];
    expect(sha256).toBeDefined();
    expect(dryruns[0]?.body).toMatchObject({ scheduler: 'local_cwd', workspace: { sha256 } });
  });

  it('lets --workspace "" turn the configured workspace off', async () => {
    const { code, err, dryruns } = await dryrunWithConfig('[cli:run]\nworkspace = src\n', '--workspace', '');
    expect(code, err).toBe(ExitCode.OK);
    expect(err).not.toContain('packing');
    expect(dryruns[0]?.body).not.toHaveProperty('workspace');
  });

  it('refuses a configured directory outside the current one, sending nothing', async () => {
    for (const outside of ['../secrets', join(root, 'secrets')]) {
      const { code, err, dryruns } = await dryrunWithConfig(`[cli:run]\nworkspace = ${outside}\n`);
      expect(code).toBe(ExitCode.USAGE);
      expect(err).toContain('set in [cli:run] of .txsconfig is outside the current directory');
      expect(dryruns).toEqual([]);
    }
  });

  it('refuses a configured directory that is a symlink leading out of the current one', async () => {
    await symlink(join(root, 'secrets'), join(project, 'innocent'));
    const { code, err, dryruns } = await dryrunWithConfig('[cli:run]\nworkspace = innocent\n');
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('is outside the current directory');
    expect(dryruns).toEqual([]);
  });

  it('lists the largest files of a configured workspace over the size limit, and says how to run without one', async () => {
    // A sparse file: its size counts, no disk is used, and the limit is checked before anything is read.
    await writeFile(join(project, 'src', 'weights.bin'), '');
    await truncate(join(project, 'src', 'weights.bin'), 600 * 1024 * 1024);
    const { code, err, dryruns } = await dryrunWithConfig('[cli:run]\nworkspace = src\n');
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toMatch(/over the 500 MiB limit; the largest:\n +600 MiB {2}weights\.bin/);
    expect(err).toMatch(/hint: .*\.torchxignore.*; or run without a workspace: --workspace ""/);
    expect(dryruns).toEqual([]);
  });
});
