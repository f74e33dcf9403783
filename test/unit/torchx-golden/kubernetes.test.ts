import { describe, expect, it } from 'vitest';
import {
  KubernetesScheduler,
  normalizeStr,
  stateFrom,
  VOLCANO_JOB_STATE,
  VOLCANO_TASK_STATE,
} from '../../../lib/schedulers/kubernetes/index.js';
import { makeAppDef, makeResource, makeRole } from '../../../lib/specs/index.js';
import { appOf, asTorchxRunOpts, golden, SUFFIX } from './cases.js';

const fixture = golden<{ resource: unknown }>('kubernetes');
const scheduler = new KubernetesScheduler(
  { sessionName: 'torchx' },
  { uniqueNamer: (name) => `${name}-${SUFFIX}` },
);

describe('KubernetesScheduler', () => {
  it("declares TorchX's run options: names, types, defaults and help", () => {
    expect(asTorchxRunOpts(scheduler.runOpts())).toEqual(fixture.run_opts);
  });

  for (const c of fixture.cases) {
    it(`creates TorchX's Volcano Job: ${c.title} with ${JSON.stringify(c.cfg)}`, () => {
      const info = scheduler.submitDryrun(appOf(c), c.cfg);
      expect(JSON.parse(JSON.stringify(info.request.resource))).toEqual(c.request.resource);
      expect(info.request.namespace).toBe(c.cfg.namespace ?? 'default');
    });
  }

  it('requires the Volcano queue, naming the option', () => {
    expect(() => scheduler.submitDryrun(appOf({ title: 'utils.echo' }), {})).toThrow(/queue/);
  });

  it('rewrites a local image to image_repo and lists it to push; without image_repo it names the field', () => {
    const app = appOf({ title: 'utils.echo' });
    (app.roles[0] as { image: string }).image = 'sha256:abc123';
    const info = scheduler.submitDryrun(app, { queue: 'q', image_repo: 'example.com/me/echo' });
    expect(info.request.imagesToPush).toEqual({ 'sha256:abc123': ['example.com/me/echo', 'abc123'] });
    expect(JSON.stringify(info.request.resource)).toContain('"image":"example.com/me/echo:abc123"');
    expect(app.roles[0]?.image).toBe('sha256:abc123');
    expect(() => scheduler.submitDryrun(app, { queue: 'q' })).toThrow(/app\.roles\.0\.image.*image_repo/);
  });

  it('turns [FIELD_PATH] env values into fieldRef env, cutting only the prefix (TorchX cut status.podIP to status.pod)', () => {
    const app = makeAppDef({
      name: 'f',
      roles: [
        makeRole({
          name: 'r',
          image: 'i',
          entrypoint: 'e',
          env: { POD_IP: '[FIELD_PATH]status.podIP' },
          resource: makeResource({ cpu: 1, gpu: 0, memMB: 512 }),
        }),
      ],
    });
    const resource = scheduler.submitDryrun(app, { queue: 'q' }).request.resource as {
      spec: { tasks: { template: { spec: { containers: { env: unknown[] }[] } } }[] };
    };
    expect(resource.spec.tasks[0]?.template.spec.containers[0]?.env[0]).toEqual({
      name: 'POD_IP',
      valueFrom: { fieldRef: { fieldPath: 'status.podIP' } },
    });
  });

  it('rejects retries under the ROLE retry policy, which Volcano cannot express', () => {
    const app = appOf({ title: 'utils.echo' });
    Object.assign(app.roles[0] as object, { maxRetries: 2, retryPolicy: 'ROLE' });
    expect(() => scheduler.validate(app, { queue: 'q' })).toThrow(/app\.roles\.0\.retryPolicy/);
  });

  it('refuses to run before anything is recorded, saying how to apply the Job', async () => {
    const info = scheduler.submitDryrun(appOf({ title: 'utils.echo' }), { queue: 'q' });
    expect(() => scheduler.appIdOf(info)).toThrow(/dry runs only.*kubectl create/);
    await expect(scheduler.cancel('default:x')).rejects.toMatchObject({ code: 'NotSupported' });
  });
});

describe('Volcano state tables', () => {
  it("map job and task phases as TorchX's JOB_STATE and TASK_STATE, and unknown phases to UNKNOWN", () => {
    expect(stateFrom(VOLCANO_JOB_STATE, 'Completed')).toBe('SUCCEEDED');
    expect(stateFrom(VOLCANO_JOB_STATE, 'Aborted')).toBe('CANCELLED');
    expect(stateFrom(VOLCANO_JOB_STATE, 'Terminated')).toBe('FAILED');
    expect(stateFrom(VOLCANO_JOB_STATE, 'Aborting')).toBe('RUNNING');
    expect(stateFrom(VOLCANO_TASK_STATE, 'Bound')).toBe('PENDING');
    expect(stateFrom(VOLCANO_TASK_STATE, 'Releasing')).toBe('RUNNING');
    expect(stateFrom(VOLCANO_TASK_STATE, 'toString')).toBe('UNKNOWN');
    expect(stateFrom(VOLCANO_JOB_STATE, undefined)).toBe('UNKNOWN');
  });

  it('normalizes names as TorchX normalize_str', () => {
    expect(normalizeStr('-Trainer_0.x-1')).toBe('trainer0x-1');
  });
});
