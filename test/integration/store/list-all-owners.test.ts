/**
 * Admin listings: every owner's records through the `byCreated` index (a Query, never a Scan), with the same
 * filters and paging as an owner's listing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_OWNERS } from '../../../lib/runner/index.js';
import type { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, sentCommands, startDynalite } from '../../helpers/dynalite.js';
import { ALICE, BOB, event, makeStore, newRecord, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;
const created: { handle: string; owner: string; createdAt: number; scheduler: string }[] = [];

beforeAll(async () => {
  db = await startDynalite();
  ({ store } = makeStore(db.client, db.tableName));
  const owners = [ALICE, BOB, 'all'];
  for (let i = 0; i < 30; i++) {
    const owner = owners[i % owners.length] ?? ALICE;
    const scheduler = i % 2 === 0 ? 'aws_batch' : 'aws_sagemaker';
    const input = newRecord({ owner, scheduler, createdAt: T0 + i * 1000 });
    await store.records.create(input);
    if (i % 5 === 0) await store.records.transition(input.handle, event('RUNNING', 0, T0 + i * 1000 + 1));
    created.push({ handle: input.handle, owner, createdAt: input.createdAt, scheduler });
  }
});
afterAll(() => db.close());

const newestFirst = (match: (c: (typeof created)[number]) => boolean) =>
  created
    .filter(match)
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((c) => c.handle);

describe('DynamoAppRecordStore.list with ALL_OWNERS', () => {
  it("pages through every owner's records newest first, with no duplicates or gaps", async () => {
    const seen: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await store.queries.list({
        owner: ALL_OWNERS,
        limit: 7,
        ...(nextToken ? { nextToken } : {}),
      });
      seen.push(...page.records.map((r) => r.handle));
      nextToken = page.nextToken;
    } while (nextToken);
    expect(seen).toEqual(newestFirst(() => true));
    expect(new Set(seen.map((h) => created.find((c) => c.handle === h)?.owner))).toEqual(
      new Set([ALICE, BOB, 'all']),
    );
  });

  it('applies filters as an owner listing does', async () => {
    const page = await store.queries.list({ owner: ALL_OWNERS, scheduler: 'aws_sagemaker', limit: 100 });
    expect(page.records.map((r) => r.handle)).toEqual(newestFirst((c) => c.scheduler === 'aws_sagemaker'));
  });

  it('queries the byCreated index and never scans the table', async () => {
    const sent = await sentCommands(db.client, () => store.queries.list({ owner: ALL_OWNERS, limit: 5 }));
    expect(sent.map((call) => call.operation)).not.toContain('Scan');
    const queries = sent.filter((call) => call.operation === 'Query').map((call) => call.input);
    expect(queries.map((input) => input.IndexName)).toEqual(['byCreated']);
  });

  it("an owner literally named 'all' sees only its own records", async () => {
    const page = await store.queries.list({ owner: 'all', limit: 100 });
    expect(page.records.map((r) => r.handle)).toEqual(newestFirst((c) => c.owner === 'all'));
  });
});
