import { describe, expect, it } from 'vitest';
import {
  ALLOW_ALL_HOST_ACCESS,
  type AppDef,
  checkHostAccess,
  HostAccessDeniedError,
  type HostAccessPolicy,
  type Mount,
  makeAppDef,
  makeRole,
  NO_HOST_ACCESS,
} from '../../../lib/specs/index.js';

const appWith = (...mounts: Mount[]): AppDef =>
  makeAppDef({ name: 'a', roles: [makeRole({ name: 'r', image: 'i', entrypoint: 'sh', mounts })] });
const bind = (srcPath: string): Mount => ({ type: 'bind', srcPath, dstPath: '/mnt', readOnly: false });
const device = (srcPath: string): Mount => ({
  type: 'device',
  srcPath,
  dstPath: srcPath,
  permissions: 'rwm',
});

function refusedPaths(app: AppDef, cfg: Record<string, unknown>, policy: HostAccessPolicy): string[] {
  try {
    checkHostAccess(app, cfg, policy);
    return [];
  } catch (error) {
    if (!(error instanceof HostAccessDeniedError)) throw error;
    expect(error.code).toBe('HostAccessDenied');
    return error.issues.map((i) => i.path);
  }
}

const SCRATCH: HostAccessPolicy = {
  privileged: false,
  hostPathPrefixes: ['/scratch'],
  devices: ['/dev/fuse'],
};

describe('checkHostAccess', () => {
  it('refuses privileged containers, bind mounts and devices by default, naming every field', () => {
    expect(
      refusedPaths(appWith(bind('/'), device('/dev/mem')), { privileged: true }, NO_HOST_ACCESS),
    ).toEqual(['cfg.privileged', 'app.roles.0.mounts.0.srcPath', 'app.roles.0.mounts.1.srcPath']);
  });

  it('allows everything under ALLOW_ALL_HOST_ACCESS (local mode)', () => {
    expect(
      refusedPaths(appWith(bind('/'), device('/dev/mem')), { privileged: true }, ALLOW_ALL_HOST_ACCESS),
    ).toEqual([]);
  });

  it('allows volumes (EFS) and privileged=false whatever the policy', () => {
    const volume: Mount = { type: 'volume', src: 'fs-123', dstPath: '/data', readOnly: true };
    expect(refusedPaths(appWith(volume), { privileged: false }, NO_HOST_ACCESS)).toEqual([]);
  });

  it('matches host path prefixes at a / boundary, after resolving . and ..', () => {
    expect(
      refusedPaths(appWith(bind('/scratch'), bind('/scratch/a/b'), bind('/scratch/./c/')), {}, SCRATCH),
    ).toEqual([]);
    expect(
      refusedPaths(
        appWith(bind('/scratchpad'), bind('/scratch/../etc'), bind('scratch/x'), bind('')),
        {},
        SCRATCH,
      ),
    ).toEqual([
      'app.roles.0.mounts.0.srcPath',
      'app.roles.0.mounts.1.srcPath',
      'app.roles.0.mounts.2.srcPath',
      'app.roles.0.mounts.3.srcPath',
    ]);
  });

  it('allows exactly the listed devices', () => {
    expect(refusedPaths(appWith(device('/dev/fuse')), {}, SCRATCH)).toEqual([]);
    expect(refusedPaths(appWith(device('/dev/fuse0'), device('/dev/../dev/mem')), {}, SCRATCH)).toEqual([
      'app.roles.0.mounts.0.srcPath',
      'app.roles.0.mounts.1.srcPath',
    ]);
  });

  it('says what is allowed and which setting allows more', () => {
    try {
      checkHostAccess(appWith(bind('/etc')), {}, SCRATCH, {
        privileged: 'P',
        hostPathPrefixes: 'the hostPathPrefixes prop',
        devices: 'D',
      });
      expect.unreachable();
    } catch (error) {
      expect((error as HostAccessDeniedError).issues[0]?.message).toContain('allowed: /scratch');
      expect((error as HostAccessDeniedError).issues[0]?.message).toContain('the hostPathPrefixes prop');
    }
  });
});
