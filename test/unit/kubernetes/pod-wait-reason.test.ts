/** podWaitReasonOf: why a pending Volcano job's pods wait, from their conditions and container states. */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiClient, KubernetesScheduler } from '../../../lib/schedulers/kubernetes/index.js';
import { type PodLike, podWaitReasonOf } from '../../../lib/schedulers/kubernetes/state.js';
import { startFakeKubeApi } from './fake-api-server.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

function podList(name: string): { items: PodLike[] } {
  const url = new URL(`../../fixtures/kubernetes/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as { items: PodLike[] };
}

function pods(name: string): PodLike[] {
  return podList(name).items;
}

const NOW = Date.parse('2026-01-15T12:00:00Z');

describe('podWaitReasonOf', () => {
  it('reports an Unschedulable pod with the scheduler’s message, holding since the condition changed', () => {
    expect(podWaitReasonOf(pods('pods-unschedulable'), NOW)).toEqual({
      text: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.',
      code: 'Unschedulable',
      since: '2026-01-15T11:20:00Z',
      source: 'kubernetes',
    });
  });

  it('reports a container that cannot pull its image, holding since now', () => {
    expect(podWaitReasonOf(pods('pods-image-pull'), NOW)).toEqual({
      text: 'ImagePullBackOff: Back-off pulling image "ghcr.io/example/trainer:missing"',
      code: 'ImagePullBackOff',
      since: new Date(NOW).toISOString(),
      source: 'kubernetes',
    });
  });

  it('says nothing for a pod that is only being created', () => {
    const creating: PodLike = {
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'True' }],
        containerStatuses: [{ state: { waiting: { reason: 'ContainerCreating' } } }],
      },
    };
    expect(podWaitReasonOf([creating], NOW)).toBeUndefined();
    expect(podWaitReasonOf([], NOW)).toBeUndefined();
  });
});

describe('KubernetesScheduler.describe of a pending job', () => {
  it('lists the job’s pods by their Volcano label and reports why they are not scheduled', async () => {
    const server = await startFakeKubeApi((r) => {
      if (r.path === '/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs/train-k3x9')
        return {
          status: 200,
          body: { metadata: { name: 'train-k3x9' }, status: { state: { phase: 'Pending' } } },
        };
      if (r.path === '/api/v1/namespaces/ml/pods')
        return { status: 200, body: podList('pods-unschedulable') };
      return undefined;
    });
    close = server.close;
    const scheduler = new KubernetesScheduler(
      { sessionName: 'torchx', now: () => NOW },
      { access: { client: new KubeApiClient({ server: server.url, token: 't' }), namespace: 'ml' } },
    );
    const desc = await scheduler.describe('ml:train-k3x9');
    expect(desc?.state).toBe('PENDING');
    expect(desc?.stateReason).toMatchObject({ code: 'Unschedulable', source: 'kubernetes' });
    expect(server.seen.find((r) => r.path.endsWith('/pods'))?.query.labelSelector).toBe(
      'volcano.sh/job-name=train-k3x9',
    );
  });
});
