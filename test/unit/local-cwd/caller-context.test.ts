import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appDirOf, minimalEnv } from '../../../lib/schedulers/local-cwd/index.js';
import { InvalidRunConfigError, ValidationError } from '../../../lib/specs/index.js';
import { appOf, type Harness, makeHarness, shApp, TEST_PATH } from './helpers.js';

const SECRET = 'AKIAEXAMPLESECRETVALUE';

describe('LocalCwdScheduler with the caller’s cwd and env', () => {
  let h: Harness;
  let callerDir: string;
  beforeEach(async () => {
    h = await makeHarness({
      env: { PATH: TEST_PATH, TXS_DYNAMODB_ENDPOINT: 'server-only', npm_lifecycle_event: 'start' },
    });
    callerDir = await mkdtemp(path.join(tmpdir(), 'txs-caller-'));
  });
  afterEach(async () => {
    await h.cleanup();
    await rm(callerDir, { recursive: true, force: true });
  });

  const lines = async (appId: string) =>
    (await h.scheduler.readLogs(appId, { role: 'worker', streams: 'stdout' })).lines;

  it("runs replicas in cfg.cwd with the caller's environment and none of the server's variables", async () => {
    await writeFile(path.join(callerDir, 'train.sh'), 'echo "trained in $(pwd)"\n');
    const appId = await h.scheduler.submit(
      shApp(
        'caller',
        'sh train.sh; echo "FROM_SHELL=$FROM_SHELL TXS=${TXS_DYNAMODB_ENDPOINT:-unset} NPM=${npm_lifecycle_event:-unset}"',
      ),
      { cwd: callerDir, env: { PATH: TEST_PATH, FROM_SHELL: 'yes' } },
    );
    expect((await h.scheduler.waitForExit(appId)).state).toBe('SUCCEEDED');
    expect(await lines(appId)).toEqual([`trained in ${callerDir}`, 'FROM_SHELL=yes TXS=unset NPM=unset']);
  });

  it("lets the role's env win over the caller's", async () => {
    const appId = await h.scheduler.submit(
      shApp('wins', 'echo "$LOGLEVEL"', { env: { LOGLEVEL: 'DEBUG' } }),
      {
        cwd: callerDir,
        env: { PATH: TEST_PATH, LOGLEVEL: 'INFO' },
      },
    );
    await h.scheduler.waitForExit(appId);
    expect(await lines(appId)).toEqual(['DEBUG']);
  });

  it('never records or echoes the values of the caller’s environment', async () => {
    const dryrun = h.scheduler.submitDryrun(shApp('secret', 'test -n "$AWS_SECRET_ACCESS_KEY"'), {
      cwd: callerDir,
      env: { PATH: TEST_PATH, AWS_SECRET_ACCESS_KEY: SECRET },
    });
    const echoed = JSON.stringify(dryrun.toJSON()) + dryrun.format();
    expect(echoed).not.toContain(SECRET);
    expect(dryrun.cfg.env).toBeNull();
    expect(dryrun.request.inheritedEnv).toEqual(['AWS_SECRET_ACCESS_KEY', 'PATH']);
    const appId = await h.scheduler.schedule(dryrun);
    expect((await h.scheduler.waitForExit(appId)).state).toBe('SUCCEEDED'); // the job did see it
    const onDisk = await readFile(path.join(appDirOf(h.dataDir, appId), 'app.json'), 'utf8');
    expect(onDisk).not.toContain(SECRET);
    expect(onDisk).toContain('AWS_SECRET_ACCESS_KEY');
  });

  it('inherits only PATH, HOME and LANG of the server when the caller sends no env', async () => {
    expect(
      minimalEnv({ PATH: '/bin', HOME: '/root', LANG: 'C.UTF-8', TXS_X: '1', npm_config_x: '2' }),
    ).toEqual({
      PATH: '/bin',
      HOME: '/root',
      LANG: 'C.UTF-8',
    });
    const appId = await h.scheduler.submit(shApp('plain', 'echo "TXS=${TXS_DYNAMODB_ENDPOINT:-unset}"'));
    await h.scheduler.waitForExit(appId);
    // The harness's fallback env stands in for the server's minimal default here.
    expect(await lines(appId)).toEqual(['TXS=server-only']);
  });

  it('refuses a relative or missing cfg.cwd naming the option', () => {
    for (const cwd of ['relative/dir', path.join(callerDir, 'missing')]) {
      try {
        h.scheduler.validate(appOf('cwd', { entrypoint: 'true' }), { cwd });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(ValidationError);
        expect((e as ValidationError).issues[0]?.path).toBe('cfg.cwd');
      }
    }
  });

  it('finds the entrypoint on the PATH of the caller’s environment', async () => {
    await writeFile(path.join(callerDir, 'mytool'), '#!/bin/sh\necho tool ran\n', { mode: 0o755 });
    const app = appOf('tool', { entrypoint: 'mytool' });
    expect(() => h.scheduler.validate(app, { cwd: callerDir, env: { PATH: TEST_PATH } })).not.toThrow(); // cwd is on PATH
    expect(() => h.scheduler.validate(app, { cwd: tmpdir(), env: { PATH: callerDir } })).not.toThrow();
  });

  it.each([
    // A string is cast like -cfg: the error names the option and shows only its value.
    ['yes', false],
    // A value of the wrong JSON type: the error shows the whole cfg, env by its names only.
    [5, true],
  ])('hides env values in run-option error messages (prepend_cwd: %s)', (value, showsCfg) => {
    try {
      h.scheduler.submitDryrun(shApp('bad', 'true'), {
        env: { AWS_SECRET_ACCESS_KEY: SECRET },
        prepend_cwd: value,
      });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidRunConfigError);
      expect((e as Error).message).toContain('prepend_cwd');
      if (showsCfg) expect((e as Error).message).toContain('AWS_SECRET_ACCESS_KEY');
      expect((e as Error).message).not.toContain(SECRET);
    }
  });
});
