/**
 * The outbox publisher (functions/events/publisher.ts): committed record changes, as the table's stream
 * carries them, become `AppState Change` events with a stable id; EventBridge is faked at the SDK wire.
 * The request path (the state-change function, the run function) publishes nothing.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamRecord } from '../../../lib/events/outbox.js';
import type { AppStateChangeEvent } from '../../../lib/runner/index.js';
import { appItem, modifyRecord } from '../../helpers/stream.js';
import { batchEvent } from '../../reliability/helpers/batch-events.js';
import {
  type FunctionsEnvironment,
  startFunctionsEnvironment,
} from '../../reliability/helpers/environment.js';
import { invoke } from '../../reliability/helpers/lambda.js';
import { BATCH_RUN } from '../../reliability/helpers/requests.js';

const eventBridge = mockClient(EventBridgeClient);
let env: FunctionsEnvironment;
let publisher: typeof import('../../../functions/events/publisher.js');
const noSleep = { sleep: async () => {} };

beforeAll(async () => {
  env = await startFunctionsEnvironment();
  process.env.TXS_EVENT_BUS_NAME = 'txs-events';
  publisher = await import('../../../functions/events/publisher.js');
});
afterAll(async () => {
  eventBridge.restore();
  await env.close();
});
beforeEach(() => {
  eventBridge.reset();
  publisher.resetPublisher();
});

/** Submits a Batch app; returns its handle and job name. */
async function submitted(): Promise<{ handle: string; jobName: string }> {
  const reply = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: BATCH_RUN });
  expect(reply.statusCode).toBe(201);
  return { handle: String(reply.body.handle), jobName: String(reply.body.appId).split(':')[1] as string };
}

/** Applies one Batch event through the state-change function; returns the stream record of the change. */
async function change(handle: string, jobName: string, status: string, time: number, seq: string) {
  const before = await appItem(env.db, handle);
  const result = await env.handleStateChange(batchEvent(jobName, status, 0, time));
  const after = await appItem(env.db, handle);
  return { result, record: modifyRecord(before ?? {}, after ?? {}, seq) };
}

function published(): AppStateChangeEvent[] {
  return eventBridge
    .commandCalls(PutEventsCommand)
    .flatMap((call) => call.args[0].input.Entries ?? [])
    .map((entry) => JSON.parse(entry.Detail ?? '{}') as AppStateChangeEvent);
}

describe('outbox publisher', () => {
  it('publishes nothing from the request path: run and state-change functions never call PutEvents', async () => {
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e' }] });
    const { handle, jobName } = await submitted();
    await env.handleStateChange(batchEvent(jobName, 'RUNNING', 0, Date.now()));
    expect((await appItem(env.db, handle))?.state).toBe('RUNNING');
    expect(eventBridge.commandCalls(PutEventsCommand)).toHaveLength(0);
  });

  it('turns a stream batch into one event per state change, with the id <handle>#<version>', async () => {
    eventBridge.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
      FailedEntryCount: 0,
      Entries: input.Entries.map((_, i) => ({ EventId: `e-${i}` })),
    }));
    const { handle, jobName } = await submitted();
    const t = Date.now();
    const running = await change(handle, jobName, 'RUNNING', t, '100');
    // Same state with fresher details: a record change, but no state change, so no event.
    const again = await change(handle, jobName, 'RUNNING', t + 5, '101');
    const done = await change(handle, jobName, 'SUCCEEDED', t + 10, '102');
    const insert: StreamRecord = { eventName: 'INSERT', dynamodb: { SequenceNumber: '99' } };

    const reply = await publisher.publishChanges(
      { Records: [insert, running.record, again.record, done.record] },
      noSleep,
    );
    expect(reply).toEqual({ batchItemFailures: [] });
    const calls = eventBridge.commandCalls(PutEventsCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input.Entries?.[0]).toMatchObject({
      EventBusName: 'txs-events',
      Source: 'torchx-serverless',
      DetailType: 'AppState Change',
    });
    const events = published();
    expect(events.map((e) => [e.id, e.from, e.to])).toEqual([
      [`${handle}#3`, 'SUBMITTED', 'RUNNING'],
      [`${handle}#5`, 'RUNNING', 'SUCCEEDED'],
    ]);
    expect(events[0]).toMatchObject({ version: 3, scheduler: 'aws_batch', source: 'event', handle });
    expect(events[0]?.time).toBe(new Date(t).toISOString());
  });

  it('sends again only the entries PutEvents rejected (FailedEntryCount) and reports no failure', async () => {
    eventBridge
      .on(PutEventsCommand)
      .resolvesOnce({
        FailedEntryCount: 1,
        Entries: [{ EventId: 'e-1' }, { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' }],
      })
      .resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e-2' }] });
    const a = await submitted();
    const b = await submitted();
    const ra = await change(a.handle, a.jobName, 'RUNNING', Date.now(), '200');
    const rb = await change(b.handle, b.jobName, 'RUNNING', Date.now(), '201');

    const reply = await publisher.publishChanges({ Records: [ra.record, rb.record] }, noSleep);
    expect(reply.batchItemFailures).toEqual([]);
    const calls = eventBridge.commandCalls(PutEventsCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args[0].input.Entries).toHaveLength(1);
    expect(published().map((e) => e.handle)).toEqual([a.handle, b.handle, b.handle]);
  });

  it('reports an event that keeps failing as a batch item failure, so the stream delivers it again', async () => {
    eventBridge.on(PutEventsCommand).callsFake((input: { Entries: { Detail: string }[] }) => ({
      FailedEntryCount: input.Entries.filter((e) => e.Detail.includes('"to":"RUNNING"')).length,
      Entries: input.Entries.map((e) =>
        e.Detail.includes('"to":"RUNNING"')
          ? { ErrorCode: 'InternalFailure', ErrorMessage: 'internal error' }
          : { EventId: 'ok' },
      ),
    }));
    const { handle, jobName } = await submitted();
    const running = await change(handle, jobName, 'RUNNING', Date.now(), '300');
    const failed = await change(handle, jobName, 'FAILED', Date.now() + 1, '301');

    const reply = await publisher.publishChanges({ Records: [running.record, failed.record] }, noSleep);
    expect(reply.batchItemFailures).toEqual([{ itemIdentifier: '300' }]);
    // Three rounds for the failing entry; the FAILED change was put once.
    expect(eventBridge.commandCalls(PutEventsCommand)).toHaveLength(3);
  });

  it('reports every record of a request that fails as a whole', async () => {
    eventBridge
      .on(PutEventsCommand)
      .rejects(Object.assign(new Error('unreachable'), { name: 'TimeoutError' }));
    const { handle, jobName } = await submitted();
    const running = await change(handle, jobName, 'RUNNING', Date.now(), '400');
    const reply = await publisher.publishChanges({ Records: [running.record] }, noSleep);
    expect(reply.batchItemFailures).toEqual([{ itemIdentifier: '400' }]);
  });

  it('publishes the committed transition once when the UpdateItem response was lost and the retry saw a duplicate', async () => {
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e' }] });
    const { handle, jobName } = await submitted();
    const before = await appItem(env.db, handle);
    env.loseNextDynamoResponse('UpdateItemCommand', true);
    const result = await env.handleStateChange(batchEvent(jobName, 'RUNNING', 0, Date.now()));
    // The SDK's retry failed its condition (its own write): the request path sees a duplicate…
    expect(result).toEqual({ applied: false, reason: 'duplicate' });
    const after = await appItem(env.db, handle);
    expect(after?.state).toBe('RUNNING');
    // …and the stream, which carries the committed change, still produces exactly one event.
    const reply = await publisher.publishChanges(
      { Records: [modifyRecord(before ?? {}, after ?? {}, '500')] },
      noSleep,
    );
    expect(reply.batchItemFailures).toEqual([]);
    expect(published().map((e) => [e.id, e.from, e.to])).toEqual([[`${handle}#3`, 'SUBMITTED', 'RUNNING']]);
  });
});
