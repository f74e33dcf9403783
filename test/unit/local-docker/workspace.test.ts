import { describe, expect, it } from 'vitest';
import { engineCreateBody, LocalDockerScheduler } from '../../../lib/schedulers/local-docker/index.js';
import {
  type AppDef,
  type JobWorkspace,
  makeAppDef,
  makeResource,
  makeRole,
  ValidationError,
} from '../../../lib/specs/index.js';

const SHA = 'ef'.repeat(32);
const ARCHIVE = `/home/alice/.local/share/txs/workspaces/archives/${SHA}.tar.gz`;
const workspace: JobWorkspace = { sha256: SHA, size: 2048, fileCount: 4, archive: ARCHIVE };
const MOUNTED = `/txs-workspace/${SHA}.tar.gz`;

const scheduler = new LocalDockerScheduler({ sessionName: 'torchx' }, { uniqueNamer: (n) => `${n}-k3x9` });

function app(replicas = 1): AppDef {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'python:3.12',
        entrypoint: 'python',
        args: ['train.py', '--out', '/data/${app_id}'],
        numReplicas: replicas,
        resource: makeResource({ cpu: 1, gpu: 0, memMB: 1024 }),
        mounts: [{ type: 'bind', srcPath: '/data', dstPath: '/data', readOnly: false }],
      }),
    ],
  });
}

describe('local_docker with a workspace', () => {
  it('mounts the archive read-only into every container and unpacks it before running the entrypoint', () => {
    const { containers } = scheduler.submitDryrun(app(2), {}, workspace).request;
    expect(containers).toHaveLength(2);
    for (const container of containers) {
      expect(container.image).toBe('python:3.12');
      expect(container.command).toEqual([
        'sh',
        '-c',
        'tar -xzf "$0" && exec "$@"',
        MOUNTED,
        'python',
        'train.py',
        '--out',
        '/data/train-k3x9',
      ]);
      expect(container.kwargs.mounts).toEqual([
        { Target: '/data', Source: '/data', Type: 'bind', ReadOnly: false },
        { Target: MOUNTED, Source: ARCHIVE, Type: 'bind', ReadOnly: true },
      ]);
      expect(container.kwargs).not.toHaveProperty('working_dir');
    }
  });

  it('sends the Docker Engine the mount and the command as the container create body', () => {
    const [container] = scheduler.submitDryrun(app(), {}, workspace).request.containers;
    const body = engineCreateBody(container as NonNullable<typeof container>) as {
      Cmd: string[];
      HostConfig: { Mounts: unknown[] };
    };
    expect(body.Cmd.slice(0, 5)).toEqual(['sh', '-c', 'tar -xzf "$0" && exec "$@"', MOUNTED, 'python']);
    expect(body.HostConfig.Mounts).toContainEqual({
      Target: MOUNTED,
      Source: ARCHIVE,
      Type: 'bind',
      ReadOnly: true,
    });
  });

  it('leaves the containers as they are without a workspace', () => {
    const [container] = scheduler.submitDryrun(app(), {}).request.containers;
    expect(container?.command).toEqual(['python', 'train.py', '--out', '/data/train-k3x9']);
    expect(container?.kwargs.mounts).toEqual([
      { Target: '/data', Source: '/data', Type: 'bind', ReadOnly: false },
    ]);
  });

  it('refuses an archive that is not on this machine (an s3:// object), naming workspace', () => {
    const s3 = { ...workspace, archive: `s3://bucket/ws/${SHA}.tar.gz` };
    let refusal: unknown;
    try {
      scheduler.submitDryrun(app(), {}, s3);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ValidationError);
    expect((refusal as ValidationError).issues[0]?.path).toBe('workspace');
    expect((refusal as ValidationError).message).toContain(s3.archive);
  });
});
