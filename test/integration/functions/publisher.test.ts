/**
 * Every accepted transition publishes the normalized `AppState Change` event on the configured bus;
 * duplicates and ignored events publish nothing.
 */
import { readFileSync } from 'node:fs';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAppDef } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

const eventBridge = mockClient(EventBridgeClient);
let db: Dynalite;
let handleStateChange: typeof import('../../../functions/events/state-change.js').handleStateChange;

beforeAll(async () => {
  db = await startDynalite();
  process.env.TXS_TABLE_NAME = db.tableName;
  process.env.TXS_DYNAMODB_ENDPOINT = db.endpoint;
  process.env.TXS_SCHEDULERS = 'aws_batch,aws_sagemaker';
  process.env.TXS_EVENT_BUS_NAME = 'txs-events';
  eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] });
  ({ handleStateChange } = await import('../../../functions/events/state-change.js'));
});
afterAll(() => db.close());

describe('AppState Change events', () => {
  it('publishes one normalized event per accepted transition', async () => {
    const store = new DynamoAppRecordStore({ tableName: db.tableName, documentClient: db.documentClient });
    await store.create({
      handle: 'aws_batch://torchx/ml-gpu-queue:published-job',
      scheduler: 'aws_batch',
      session: 'torchx',
      appId: 'ml-gpu-queue:published-job',
      nativeName: 'published-job',
      owner: 'arn:aws:iam::123456789012:user/alice',
      name: 'train',
      app: makeAppDef({ name: 'train' }),
      cfg: {},
      state: 'SUBMITTED',
      createdAt: 1_735_732_000_000,
    });
    const event = JSON.parse(
      readFileSync(
        new URL('../../fixtures/aws-batch/events/batch-single-running.json', import.meta.url),
        'utf8',
      ),
    );
    event.detail.jobName = 'published-job';

    expect(await handleStateChange(event)).toMatchObject({ applied: true });
    expect(await handleStateChange(event)).toMatchObject({ applied: false, reason: 'duplicate' });

    const calls = eventBridge.commandCalls(PutEventsCommand);
    expect(calls).toHaveLength(1);
    const entry = calls[0]?.args[0].input.Entries?.[0];
    expect(entry).toMatchObject({
      EventBusName: 'txs-events',
      Source: 'torchx-serverless',
      DetailType: 'AppState Change',
    });
    expect(JSON.parse(entry?.Detail ?? '{}')).toEqual({
      handle: 'aws_batch://torchx/ml-gpu-queue:published-job',
      scheduler: 'aws_batch',
      appId: 'ml-gpu-queue:published-job',
      owner: 'arn:aws:iam::123456789012:user/alice',
      session: 'torchx',
      name: 'train',
      from: 'SUBMITTED',
      to: 'RUNNING',
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      source: 'event',
    });
  });
});
