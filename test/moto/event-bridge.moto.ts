/**
 * The EventBridge publisher over the real AWS wire: PutEvents to moto's bus, whose rule for `AppState Change`
 * events delivers them to a log group the test reads. The local server publishes in-process instead (see
 * lib/events/local-outbox.ts), so this drives the deployed publisher's PutEvents path directly.
 */
import { CloudWatchLogsClient, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventBridgePutEvents } from '../../functions/events/put-events.js';
import { putAllEvents } from '../../lib/events/outbox.js';
import type { AppStateChangeEvent } from '../../lib/runner/index.js';
import { MOTO_EVENT_BUS, MOTO_EVENTS_LOG_GROUP } from './constants.js';
import { pointSdkAtMoto } from './helpers.js';

let logs: CloudWatchLogsClient;

beforeAll(() => {
  logs = new CloudWatchLogsClient(pointSdkAtMoto());
});
afterAll(() => logs?.destroy());

describe("the outbox publisher's PutEvents over the AWS wire (moto)", () => {
  it('puts an AppState Change event on the bus that a rule on source and detail-type matches', async () => {
    const event: AppStateChangeEvent = {
      handle: 'aws_batch://torchx/txs-moto-queue:train-moto1',
      scheduler: 'aws_batch',
      appId: 'txs-moto-queue:train-moto1',
      owner: 'moto-events',
      session: 'torchx',
      name: 'train',
      from: 'RUNNING',
      to: 'SUCCEEDED',
      reason: 'Essential container in task exited — ünïcödé ✓',
      time: new Date().toISOString(),
      source: 'event',
      id: 'aws_batch://torchx/txs-moto-queue:train-moto1#3',
      version: 3,
    };
    const outcome = await putAllEvents([event], {
      busName: MOTO_EVENT_BUS,
      putEvents: eventBridgePutEvents(),
    });
    expect(outcome).toEqual({ failed: [], retried: 0 });

    const delivered = await logs.send(new FilterLogEventsCommand({ logGroupName: MOTO_EVENTS_LOG_GROUP }));
    const messages = (delivered.events ?? []).map(
      (e) => JSON.parse(e.message ?? '{}') as { source: string; 'detail-type': string; detail: unknown },
    );
    expect(messages).toContainEqual(
      expect.objectContaining({
        source: 'torchx-serverless',
        'detail-type': 'AppState Change',
        detail: event,
      }),
    );
  });
});
