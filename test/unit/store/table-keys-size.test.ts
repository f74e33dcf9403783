import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../lib/specs/index.js';
import {
  APP_TABLE,
  attributeValueSize,
  createTableInput,
  itemSize,
  TABLE_ATTRIBUTES,
  TABLE_INDEXES,
  updateTimeToLiveInput,
} from '../../../lib/store/index.js';
import {
  createdAtPrefix,
  createdSortKey,
  decodePageCursor,
  encodePageCursor,
  handleOfCreatedKey,
  idempotencyPartitionKey,
  nativeKeyOf,
} from '../../../lib/store/keys.js';

describe('createTableInput', () => {
  const input = createTableInput('txs-apps');

  it('creates an on-demand table keyed by pk and sk', () => {
    expect(input).toMatchObject({
      TableName: 'txs-apps',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    });
  });

  it('declares each key attribute once with its type', () => {
    expect(input.AttributeDefinitions).toEqual([
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'ownerKey', AttributeType: 'S' },
      { AttributeName: 'createdKey', AttributeType: 'S' },
      { AttributeName: 'nativeKey', AttributeType: 'S' },
      { AttributeName: 'activeKey', AttributeType: 'S' },
      { AttributeName: 'updatedAt', AttributeType: 'N' },
      { AttributeName: 'allKey', AttributeType: 'S' },
    ]);
  });

  it('defines the four indexes with their projections', () => {
    expect(input.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: TABLE_INDEXES.byOwner,
        KeySchema: [
          { AttributeName: 'ownerKey', KeyType: 'HASH' },
          { AttributeName: 'createdKey', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: TABLE_INDEXES.byNativeName,
        KeySchema: [
          { AttributeName: 'nativeKey', KeyType: 'HASH' },
          { AttributeName: 'createdKey', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      {
        IndexName: TABLE_INDEXES.byActive,
        KeySchema: [
          { AttributeName: 'activeKey', KeyType: 'HASH' },
          { AttributeName: 'updatedAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: TABLE_INDEXES.byCreated,
        KeySchema: [
          { AttributeName: 'allKey', KeyType: 'HASH' },
          { AttributeName: 'createdKey', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
  });

  it('names the TTL attribute for the stack and for UpdateTimeToLive', () => {
    expect(APP_TABLE.timeToLiveAttribute).toBe(TABLE_ATTRIBUTES.expiresAt);
    expect(updateTimeToLiveInput('txs-apps')).toEqual({
      TableName: 'txs-apps',
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });
});

describe('table keys', () => {
  it('zero-pads createdAt so keys sort by time', () => {
    const early = createdSortKey(999, 'b://s/z');
    const late = createdSortKey(1_700_000_000_000, 'a://s/a');
    expect(early).toBe('000000000000999#b://s/z');
    expect(early < late).toBe(true);
    expect(createdAtPrefix(999.2) > createdSortKey(999, 'x://y/z')).toBe(true);
    expect(handleOfCreatedKey(late)).toBe('a://s/a');
  });

  it('encodes idempotency key parts so the separator cannot collide', () => {
    expect(idempotencyPartitionKey('a#b', 'c')).not.toBe(idempotencyPartitionKey('a', 'b#c'));
    expect(nativeKeyOf('a#b', 'c')).not.toBe(nativeKeyOf('a', 'b#c'));
  });
});

describe('page tokens', () => {
  it('round-trips a list cursor and an active cursor', () => {
    const createdKey = createdSortKey(1_700_000_000_000, 'aws_batch://torchx/q:job');
    expect(decodePageCursor(encodePageCursor({ index: 'byOwner', createdKey }), 'byOwner')).toEqual({
      index: 'byOwner',
      createdKey,
    });
    const active = { index: 'byActive' as const, updatedAt: 42, handle: 'local_cwd://torchx/echo-1' };
    expect(decodePageCursor(encodePageCursor(active), 'byActive')).toEqual(active);
  });

  it('produces URL-safe tokens', () => {
    const token = encodePageCursor({ index: 'byOwner', createdKey: createdSortKey(1, 'x://y/ü?&=/+') });
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it.each([
    '',
    'not base64!',
    Buffer.from('not json').toString('base64url'),
    Buffer.from('null').toString('base64url'),
    Buffer.from('{"v":2,"i":"o","c":"000000000000001#h"}').toString('base64url'),
    Buffer.from('{"v":1,"i":"o","c":"1#h"}').toString('base64url'),
    Buffer.from('{"v":1,"i":"a","u":1,"h":"h"}').toString('base64url'),
    'A'.repeat(5000),
  ])('rejects %j with a ValidationError naming nextToken', (token) => {
    try {
      decodePageCursor(token, 'byOwner');
      expect.unreachable('a bad token was accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([{ path: 'nextToken', message: expect.any(String) }]);
    }
  });
});

describe('itemSize', () => {
  it.each([
    ['a string', 'abc', 3],
    ['a multi-byte string', 'ü', 2],
    ['a one-digit number', 7, 2],
    ['a 13-digit number', 1_700_000_000_123, 8],
    ['trailing zeros', 1_000_000, 2],
    ['a boolean', true, 1],
    ['null', null, 1],
    ['a list', ['ab', 1], 3 + (1 + 2) + (1 + 2)],
    ['a map', { ab: 'c' }, 3 + 1 + 2 + 1],
    ['a map with an undefined value', { a: undefined }, 3],
  ])('sizes %s like DynamoDB', (_what, value, expected) => {
    expect(attributeValueSize(value)).toBe(expected);
  });

  it('adds attribute names to values', () => {
    expect(itemSize({ pk: 'APP#x', n: 10, gone: undefined })).toBe(2 + 5 + 1 + 2);
  });
});

describe('lib/store', () => {
  it('never scans the table', async () => {
    const dir = new URL('../../../lib/store/', import.meta.url);
    const sources = (await readdir(dir)).filter((file) => file.endsWith('.ts'));
    expect(sources.length).toBeGreaterThan(3);
    for (const file of sources) {
      const text = await readFile(new URL(file, dir), 'utf8');
      expect(text, file).not.toMatch(/\bScanCommand\b|\bpaginateScan\b|\bScanInput\b/);
    }
  });
});
