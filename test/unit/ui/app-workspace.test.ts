/**
 * The dashboard's app page for an app run with a workspace: it shows the archive (hash, files, size), and the
 * dry run of the recorded request (the same request Relaunch submits) names the same archive.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppResponse } from '../../../lib/specs/api.js';
import { appHref, parseRoute } from '../../../ui/route.js';
import { FakeNode, installFakeDom } from '../../helpers/fake-dom.js';

type View = (root: unknown, route: ReturnType<typeof parseRoute>) => () => void;
const { appView, recordedRequest } = (await import(
  /* @vite-ignore */ new URL('../../../ui/views/app.ts', import.meta.url).href
)) as { appView: View; recordedRequest: (app: AppResponse) => Record<string, unknown> };

const SHA = '3f2a'.repeat(16);
const APP = {
  scheduler: 'aws_batch',
  appId: 'q:train-1',
  session: 'torchx',
  handle: 'aws_batch://torchx/q:train-1',
  name: 'train',
  createdAt: '2026-11-27T08:00:00.000Z',
  status: { state: 'SUCCEEDED', numRestarts: 0, msg: '', structuredErrorMsg: '<NONE>', roles: [] },
  app: {
    name: 'train',
    roles: [{ name: 'train', image: 'python:3.11', entrypoint: 'python' }],
    metadata: {},
  },
  cfg: { queue: 'q' },
  workspace: { sha256: SHA, size: 1_258_291, fileCount: 41 },
} as unknown as AppResponse;

let uninstall: () => void;
beforeAll(() => {
  uninstall = installFakeDom();
});
afterAll(() => {
  uninstall();
  vi.unstubAllGlobals();
});

describe('the app page of an app run with a workspace', () => {
  it('shows the archive and dry-runs the recorded request with the same workspace', async () => {
    const dryruns: unknown[] = [];
    vi.stubGlobal('fetch', async (path: string, init: { body?: string } = {}) => {
      const answer = path.startsWith('/v1/dryrun')
        ? { scheduler: 'aws_batch', app: APP.app, cfg: {}, request: {}, text: 'would run' }
        : APP;
      if (path.startsWith('/v1/dryrun')) dryruns.push(JSON.parse(init.body ?? '{}'));
      const body = JSON.stringify(answer);
      return { ok: true, status: 200, statusText: 'OK', text: async () => body };
    });
    const root = new FakeNode('MAIN');
    const stop = appView(root, parseRoute(appHref('aws_batch', 'q:train-1')));
    for (let i = 0; i < 200 && dryruns.length === 0; i++) await new Promise((r) => setTimeout(r, 0));
    stop();
    expect(root.textContent).toContain(`Workspace${SHA} (41 files, 1.2 MiB)`);
    expect(dryruns).toEqual([expect.objectContaining({ workspace: { sha256: SHA } })]);
  });

  it('relaunches with the recorded workspace, and without one for an app that had none', () => {
    expect(recordedRequest(APP)).toEqual({
      scheduler: 'aws_batch',
      session: 'torchx',
      app: APP.app,
      cfg: { queue: 'q' },
      workspace: { sha256: SHA },
    });
    const { workspace: _, ...without } = APP;
    expect(recordedRequest(without as AppResponse)).not.toHaveProperty('workspace');
  });
});
