import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type OutboxStore, withLocalOutbox } from '../../../lib/events/local-outbox.js';
import {
  type AppStateChangeEvent,
  IdempotencyConflictError,
  Runner,
  userNameOf,
  WaitTimeoutError,
} from '../../../lib/runner/index.js';
import { SchedulerRegistry, UnknownRoleError } from '../../../lib/schedulers/index.js';
import { compileLogFilter } from '../../../lib/schedulers/log-filter.js';
import {
  InvalidRunConfigError,
  makeAppDef,
  makeResource,
  makeRole,
  UnknownAppError,
  UnknownSchedulerError,
  ValidationError,
} from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { FakeScheduler } from '../../helpers/fake-scheduler.js';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

const OWNER = 'arn:aws:iam::123456789012:user/alice';

function app(name = 'trainer') {
  return makeAppDef({
    name,
    roles: [
      makeRole({
        name: 'trainer',
        image: 'img',
        entrypoint: 'python',
        args: ['train.py', '--id', '${app_id}'],
        numReplicas: 2,
        resource: makeResource({ cpu: 1, gpu: 0, memMB: 512 }),
      }),
    ],
  });
}

interface Harness {
  runner: Runner;
  fake: FakeScheduler;
  events: AppStateChangeEvent[];
  store: OutboxStore;
  clock: { now: number };
}

async function harness(): Promise<Harness> {
  const tableName = await db.createTable();
  const clock = { now: 1_700_000_000_000 };
  const now = () => clock.now;
  let fake: FakeScheduler | undefined;
  const registry = new SchedulerRegistry(
    {
      fake: (ctx) => {
        fake = new FakeScheduler({ ...ctx, now });
        return fake;
      },
    },
    {
      sessionName: 'torchx',
      now,
      sleep: async (ms) => {
        clock.now += ms;
      },
    },
  );
  const events: AppStateChangeEvent[] = [];
  const store = withLocalOutbox(new DynamoAppRecordStore({ tableName, client: db.client, now }), {
    publisher: { publish: async (e) => void events.push(e) },
  });
  const runner = new Runner({
    schedulers: registry,
    store,
    now,
    sleep: async (ms) => {
      clock.now += ms;
    },
  });
  registry.get('fake');
  return { runner, fake: fake as FakeScheduler, events, store, clock };
}

describe('Runner', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });

  describe('dryrun', () => {
    it('returns the native request, injects TORCHX_JOB_ID and submits nothing', () => {
      const info = h.runner.dryrun(app(), 'fake', { queue: 'q' });
      expect(info.request).toEqual({
        jobName: 'trainer-id1',
        queue: 'q',
        roles: [{ name: 'trainer', replicas: 2, command: ['python', 'train.py', '--id', '${app_id}'] }],
      });
      expect(info.app.roles[0]?.env.TORCHX_JOB_ID).toBe('fake://torchx/${app_id}');
      expect(info.cfg).toEqual({ queue: 'q', priority: 0 });
      expect(h.fake.calls).toEqual([]);
    });

    it('does not modify the caller’s AppDef', () => {
      const input = app();
      h.runner.dryrun(input, 'fake', { queue: 'q' });
      expect(input.roles[0]?.env).toEqual({});
    });

    it.each([
      [
        makeAppDef({ name: 'empty' }),
        'app.roles',
        'No roles for app: empty. Did you forget to add roles to AppDef?',
      ],
      [
        makeAppDef({
          name: 'x',
          roles: [makeRole({ name: 'r', image: 'i', resource: makeResource({ cpu: 1, gpu: 0, memMB: 1 }) })],
        }),
        'app.roles.0.entrypoint',
        'No entrypoint for role: r. Set the command the role runs (e.g. "python")',
      ],
      [
        makeAppDef({
          name: 'x',
          roles: [
            makeRole({
              name: 'r',
              image: 'i',
              entrypoint: 'e',
              numReplicas: 0,
              resource: makeResource({ cpu: 1, gpu: 0, memMB: 1 }),
            }),
          ],
        }),
        'app.roles.0.numReplicas',
        'Non-positive replicas for role: r. Did you forget to set role.num_replicas?',
      ],
      [
        makeAppDef({ name: 'x', roles: [makeRole({ name: 'r', image: 'img-a', entrypoint: 'e' })] }),
        'app.roles.0.resource',
        'No resource for role: img-a. Did you forget to attach resource to the role? Give a named resource such as "cpu.small" or {cpu, gpu, memMB}',
      ],
    ])('rejects %# naming %s', (input, path, message) => {
      let error: unknown;
      try {
        h.runner.dryrun(input, 'fake', { queue: 'q' });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([{ path, message }]);
    });

    it('rejects a missing required option and an unknown scheduler', () => {
      expect(() => h.runner.dryrun(app(), 'fake', {})).toThrow(InvalidRunConfigError);
      expect(() => h.runner.dryrun(app(), 'slurm', {})).toThrow(UnknownSchedulerError);
      expect(() => h.runner.dryrun(app(), 'slurm', {})).toThrow('Use one of: fake');
    });

    it('materializes components', () => {
      const info = h.runner.dryrunComponent('utils.echo', ['--msg', 'hi'], 'fake', { queue: 'q' });
      expect(info.app.roles[0]?.args).toEqual(['hi']);
    });
  });

  describe('run', () => {
    it('records the app before submitting it, then moves it to SUBMITTED', async () => {
      const result = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      expect(result.handle).toBe('fake://torchx/q:trainer-id1');
      expect(result.created).toBe(true);
      expect(h.fake.calls).toEqual(['schedule']);
      const record = await h.runner.get(result.handle, OWNER);
      expect(record).toMatchObject({
        state: 'SUBMITTED',
        owner: OWNER,
        nativeName: 'trainer-id1',
        name: 'trainer',
      });
      expect(record.history.map((x) => `${x.from}->${x.to}`)).toEqual(['UNSUBMITTED->SUBMITTED']);
      await h.store.drain();
      expect(h.events.map((e) => `${e.from}->${e.to} ${e.id}`)).toEqual([
        `UNSUBMITTED->SUBMITTED ${result.handle}#2`,
      ]);
    });

    it('marks the record FAILED with the reason when the submission fails, and rethrows', async () => {
      h.fake.failNextSchedule = new ValidationError('queue q does not exist');
      await expect(h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER })).rejects.toThrow(
        'queue q does not exist',
      );
      const page = await h.runner.list({ owner: OWNER });
      expect(page.records).toHaveLength(1);
      expect(page.records[0]).toMatchObject({
        state: 'FAILED',
        reason: 'submission failed: queue q does not exist',
      });
    });

    it("records only the code, not AWS's text, when the backend refuses the submission", async () => {
      const { BackendAccessDeniedError } = await import('../../../lib/schedulers/index.js');
      h.fake.failNextSchedule = new BackendAccessDeniedError(
        'AWS denied batch:SubmitJob (AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role/Run/x)',
      );
      await expect(h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER })).rejects.toThrow(
        BackendAccessDeniedError,
      );
      const page = await h.runner.list({ owner: OWNER });
      const failed = page.records.find(
        (r) => r.state === 'FAILED' && r.reason?.includes('BackendAccessDenied'),
      );
      expect(failed?.reason).toBe(
        "submission failed: BackendAccessDenied (the backend refused it; the service's log has the details)",
      );
    });

    it('returns the same handle for a retried Idempotency-Key and submits once', async () => {
      const ctx = { owner: OWNER, idempotencyKey: 'k-1' };
      const first = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
      const second = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
      expect(second.handle).toBe(first.handle);
      expect(second.created).toBe(false);
      expect(h.fake.calls.filter((c) => c === 'schedule')).toHaveLength(1);
    });

    it("hashes the caller's env by names only: a retry whose env values changed replays, and no digest of a value is kept", async () => {
      const ctx = { owner: OWNER, idempotencyKey: 'k-env' };
      const first = await h.runner.run(
        app(),
        'fake',
        { queue: 'q', env: { AWS_SECRET_ACCESS_KEY: 'one' } },
        ctx,
      );
      const second = await h.runner.run(
        app(),
        'fake',
        { queue: 'q', env: { AWS_SECRET_ACCESS_KEY: 'two' } },
        ctx,
      );
      expect(second.handle).toBe(first.handle);
      expect(second.created).toBe(false);
      await expect(h.runner.run(app(), 'fake', { queue: 'q', env: { OTHER: 'one' } }, ctx)).rejects.toThrow(
        IdempotencyConflictError,
      );
      // The fake scheduler declares no `env` option: the values are dropped, never recorded.
      expect(JSON.stringify(await h.runner.get(first.handle))).not.toContain('"one"');
    });

    it('submits once for concurrent requests with one Idempotency-Key', async () => {
      const ctx = { owner: OWNER, idempotencyKey: 'k-concurrent' };
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          h.runner.runComponent('utils.echo', [], 'fake', { queue: 'q' }, ctx),
        ),
      );
      expect(new Set(results.map((r) => r.handle)).size).toBe(1);
      expect(h.fake.calls.filter((c) => c === 'schedule')).toHaveLength(1);
    });

    it('rejects an Idempotency-Key reused for a different request', async () => {
      await h.runner.run(app('a'), 'fake', { queue: 'q' }, { owner: OWNER, idempotencyKey: 'k-2' });
      await expect(
        h.runner.run(app('b'), 'fake', { queue: 'q' }, { owner: OWNER, idempotencyKey: 'k-2' }),
      ).rejects.toThrow(IdempotencyConflictError);
    });

    it('replays a rejected submission to a retry with the same key without submitting; a new key submits', async () => {
      h.fake.failNextSchedule = new ValidationError('queue q does not exist');
      const ctx = { owner: OWNER, idempotencyKey: 'k-3' };
      await expect(h.runner.run(app(), 'fake', { queue: 'q' }, ctx)).rejects.toThrow(
        'queue q does not exist',
      );
      const schedules = h.fake.calls.filter((c) => c === 'schedule').length;
      const replay = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx).catch((e: unknown) => e);
      expect(replay).toMatchObject({
        code: 'ValidationFailed',
        message: 'queue q does not exist',
        replayed: true,
      });
      expect(h.fake.calls.filter((c) => c === 'schedule').length).toBe(schedules);
      const fresh = await h.runner.run(app(), 'fake', { queue: 'q' }, { ...ctx, idempotencyKey: 'k-3b' });
      expect(fresh.created).toBe(true);
    });
  });

  describe('status, wait and transitions', () => {
    it('reads status from the record without asking the scheduler; refresh asks it', async () => {
      const { handle } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      h.fake.calls.length = 0;
      expect((await h.runner.status(handle)).state).toBe('SUBMITTED');
      expect(h.fake.calls).toEqual([]);
      h.fake.advance('q:trainer-id1', 'RUNNING');
      expect((await h.runner.status(handle, { refresh: true })).state).toBe('RUNNING');
      expect(h.fake.calls).toEqual(['describe']);
    });

    it('waits until the app is terminal, polling the scheduler', async () => {
      const { handle } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      let polls = 0;
      const originalDescribe = h.fake.describe.bind(h.fake);
      h.fake.describe = async (appId) => {
        polls += 1;
        if (polls === 3) h.fake.advance(appId, 'SUCCEEDED');
        return originalDescribe(appId);
      };
      const status = await h.runner.wait(handle, { intervalMs: 1000 });
      expect(status.state).toBe('SUCCEEDED');
      expect(polls).toBe(3);
      const record = await h.runner.get(handle);
      expect(record.history.map((x) => x.to)).toEqual(['SUBMITTED', 'PENDING', 'SUCCEEDED']);
    });

    it('gives up waiting after the timeout', async () => {
      const { handle } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      await expect(h.runner.wait(handle, { intervalMs: 1000, timeoutMs: 5000 })).rejects.toThrow(
        WaitTimeoutError,
      );
    });

    it('routes a native transition by native name and ignores apps it did not launch', async () => {
      const { handle } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      const outcome = await h.runner.applyNativeTransition('fake', 'trainer-id1', {
        state: 'RUNNING',
        attempt: 0,
        eventTime: h.clock.now + 10,
        source: 'event',
      });
      expect(outcome?.applied).toBe(true);
      expect((await h.runner.get(handle)).state).toBe('RUNNING');
      expect(
        await h.runner.applyNativeTransition('fake', 'someone-elses-job', {
          state: 'RUNNING',
          attempt: 0,
          eventTime: 1,
          source: 'event',
        }),
      ).toBeUndefined();
    });

    it('marks an UNSUBMITTED record the scheduler never saw FAILED after the grace period', async () => {
      const info = h.runner.dryrun(app(), 'fake', { queue: 'q' });
      const store = (h.runner as unknown as { store: DynamoAppRecordStore }).store;
      const appId = h.fake.appIdOf(info as never);
      const handle = `fake://torchx/${appId}`;
      await store.records.create({
        handle,
        scheduler: 'fake',
        session: 'torchx',
        appId,
        nativeName: 'trainer-id1',
        owner: OWNER,
        name: 'trainer',
        app: info.app,
        cfg: info.cfg,
        state: 'UNSUBMITTED',
        createdAt: h.clock.now,
      });
      expect((await h.runner.refresh(handle)).state).toBe('UNSUBMITTED');
      h.clock.now += 11 * 60_000;
      const after = await h.runner.refresh(handle);
      expect(after).toMatchObject({
        state: 'FAILED',
        reason: 'the app never reached the scheduler (submission interrupted)',
      });
    });

    it('reconciles every active record from the scheduler', async () => {
      const a = await h.runner.run(app('a'), 'fake', { queue: 'q' }, { owner: OWNER });
      const b = await h.runner.run(app('b'), 'fake', { queue: 'q' }, { owner: OWNER });
      h.fake.advance(a.record.appId, 'SUCCEEDED');
      h.fake.advance(b.record.appId, 'RUNNING');
      const report = await h.runner.reconcile('fake');
      expect(report).toEqual({ checked: 2, changed: 2, errors: 0 });
      expect((await h.runner.get(a.handle)).state).toBe('SUCCEEDED');
      expect((await h.runner.get(b.handle)).state).toBe('RUNNING');
    });
  });

  describe('ownership, cancel, delete, list and logs', () => {
    it("answers UnknownApp for another owner's app", async () => {
      const { handle } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      await expect(h.runner.get(handle, 'arn:aws:iam::123456789012:user/bob')).rejects.toThrow(
        UnknownAppError,
      );
      await expect(h.runner.cancel(handle, 'bob')).rejects.toThrow(UnknownAppError);
      expect(h.fake.calls).not.toContain('cancel');
    });

    it('cancels through the scheduler and is a no-op once terminal', async () => {
      const { handle } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      await h.runner.cancel(handle, OWNER);
      expect(h.fake.calls.filter((c) => c === 'cancel')).toHaveLength(1);
      expect((await h.runner.get(handle)).cancelRequestedAt).toBe(h.clock.now);
      await h.runner.refresh(handle);
      expect((await h.runner.get(handle)).state).toBe('CANCELLED');
      await h.runner.cancel(handle, OWNER);
      expect(h.fake.calls.filter((c) => c === 'cancel')).toHaveLength(1);
    });

    it('deletes from the scheduler data plane and keeps the record', async () => {
      const { handle, record } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      await h.runner.delete(handle, OWNER);
      expect(h.fake.jobs.get(record.appId)?.deleted).toBe(true);
      expect((await h.runner.get(handle)).handle).toBe(handle);
    });

    it("lists the owner's apps newest first", async () => {
      await h.runner.run(app('first'), 'fake', { queue: 'q' }, { owner: OWNER });
      h.clock.now += 1000;
      await h.runner.run(app('second'), 'fake', { queue: 'q' }, { owner: OWNER });
      await h.runner.run(app('bobs'), 'fake', { queue: 'q' }, { owner: 'bob' });
      const page = await h.runner.list({ owner: OWNER });
      expect(page.records.map((r) => r.name)).toEqual(['second', 'first']);
    });

    it('reads logs by page and follows them until the app is terminal', async () => {
      const { handle, record } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      h.fake.log(record.appId, 'trainer', 1, 'epoch 1', 'loss=0.5', 'epoch 2');
      const page = await h.runner.readLogs(
        handle,
        { role: 'trainer', replica: 1, filter: compileLogFilter('epoch'), limit: 2 },
        OWNER,
      );
      expect(page).toMatchObject({ lines: ['epoch 1'], caughtUp: false, nextToken: '2' });
      await expect(h.runner.readLogs(handle, { role: 'nope' }, OWNER)).rejects.toThrow(UnknownRoleError);

      const lines: string[] = [];
      let polls = 0;
      const originalDescribe = h.fake.describe.bind(h.fake);
      h.fake.describe = async (appId) => {
        polls += 1;
        if (polls === 2) {
          h.fake.log(appId, 'trainer', 1, 'done');
          h.fake.advance(appId, 'SUCCEEDED');
        }
        return originalDescribe(appId);
      };
      for await (const line of h.runner.logLines(handle, {
        role: 'trainer',
        replica: 1,
        tail: true,
        pollIntervalMs: 10,
      })) {
        lines.push(line);
      }
      expect(lines).toEqual(['epoch 1', 'loss=0.5', 'epoch 2', 'done']);
    });

    it('uses the first role when no role is given', async () => {
      const { handle, record } = await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER });
      h.fake.log(record.appId, 'trainer', 0, 'hello');
      expect((await h.runner.readLogs(handle, { role: '' }, OWNER)).lines).toEqual(['hello']);
    });
  });

  it('describes schedulers and their run options', () => {
    expect(h.runner.describeSchedulers()).toEqual([
      {
        name: 'fake',
        capabilities: expect.objectContaining({ cancel: true }),
        runOpts: [
          {
            name: 'queue',
            type: 'str',
            default: null,
            required: true,
            help: 'queue to submit to',
            aliases: [],
          },
          { name: 'priority', type: 'int', default: 0, required: false, help: 'priority', aliases: [] },
        ],
      },
    ]);
  });
});

describe('userNameOf', () => {
  it('takes the last segment of an IAM ARN and keeps anything else', () => {
    expect(userNameOf('arn:aws:iam::1:user/alice')).toBe('alice');
    expect(userNameOf('arn:aws:sts::1:assumed-role/Dev/bob-session')).toBe('bob-session');
    expect(userNameOf('carol')).toBe('carol');
  });
});

describe('Runner with an ambiguous submission', () => {
  it('keeps the record, binds the Idempotency-Key to it, and a retry returns the handle without submitting again', async () => {
    const h = await harness();
    const { BackendError } = await import('../../../lib/schedulers/index.js');
    const { SubmissionOutcomeUnknownError } = await import('../../../lib/runner/index.js');
    h.fake.failNextSchedule = new BackendError('batch:SubmitJob timed out', true);
    const ctx = { owner: OWNER, idempotencyKey: 'k-ambiguous' };
    const error = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError);
    expect(((error as Error).cause as Error).message).toBe('batch:SubmitJob timed out');
    expect((error as Error).message).not.toContain('batch:SubmitJob timed out');
    const handle = (error as InstanceType<typeof SubmissionOutcomeUnknownError>).handle;
    expect((await h.runner.get(handle)).state).toBe('UNSUBMITTED');

    const retry = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    expect(retry).toMatchObject({ handle, created: false });
    expect(h.fake.calls.filter((c) => c === 'schedule')).toHaveLength(1);
  });
});
