/**
 * The app record table as plain data: attribute names, key schema, global secondary indexes and the TTL
 * attribute. This file is pure (it imports only types) so that the CDK stack, local mode and tests all build
 * the same table from it.
 *
 * One table holds two kinds of items (single-table design):
 *
 * | item | `pk` | `sk` | index keys | TTL (`expiresAt`) |
 * |---|---|---|---|---|
 * | app record | `APP#<handle>` | `A` | `ownerKey`, `allKey`, `createdKey`, `nativeKey`, `activeKey` (only while not terminal) | retention after a terminal state |
 * | idempotency reservation | `IDEM#<owner>#<key>` (URI-encoded parts) | `I` | none | 24 h after the reservation |
 *
 * @module
 */
import type { CreateTableCommandInput, UpdateTimeToLiveCommandInput } from '@aws-sdk/client-dynamodb';

/** Attribute names of keys and index keys. Every other attribute is an `AppRecord` field (lib/specs). */
export const TABLE_ATTRIBUTES = {
  /** Table partition key (string). */
  partitionKey: 'pk',
  /** Table sort key (string). */
  sortKey: 'sk',
  /** `byOwner` partition key: the record's owner. */
  ownerKey: 'ownerKey',
  /** Sort key of `byOwner` and `byNativeName`: 15-digit zero-padded `createdAt`, `#`, handle. */
  createdKey: 'createdKey',
  /** `byNativeName` partition key: `<scheduler>#<nativeName>`. */
  nativeKey: 'nativeKey',
  /** `byCreated` partition key: the same value ({@link ALL_APPS_KEY}) on every app record. */
  allKey: 'allKey',
  /** `byActive` partition key: the scheduler name, present only while the app is not terminal. */
  activeKey: 'activeKey',
  /** `byActive` sort key (number, epoch ms): the record's `updatedAt`. */
  updatedAt: 'updatedAt',
  /** TTL attribute (number, epoch seconds). */
  expiresAt: 'expiresAt',
} as const;

/** Names of the global secondary indexes. */
export const TABLE_INDEXES = {
  /** An owner's records, newest first (`ownerKey`, `createdKey`), all attributes projected. */
  byOwner: 'byOwner',
  /** Event routing: (`nativeKey`, `createdKey`), keys only. */
  byNativeName: 'byNativeName',
  /** Sparse: non-terminal records of a scheduler by last update (`activeKey`, `updatedAt`), all attributes. */
  byActive: 'byActive',
  /** Every owner's records, newest first (`allKey`, `createdKey`), all attributes: admin listings. */
  byCreated: 'byCreated',
} as const;

/**
 * The `allKey` of every app record. One partition key value: the index serves admin listings, and its write
 * rate is the rate of record writes (a few per job), far below a partition's 1,000 writes per second.
 */
export const ALL_APPS_KEY = 'APP';

/** How much of an item an index holds. */
export type IndexProjection = 'ALL' | 'KEYS_ONLY';

/** One global secondary index, as plain data. */
export interface IndexDefinition {
  name: string;
  partitionKey: { name: string; type: 'S' | 'N' };
  sortKey: { name: string; type: 'S' | 'N' };
  projection: IndexProjection;
}

/** The whole table, as plain data (the CDK stack mirrors it). */
export interface TableDefinition {
  partitionKey: { name: string; type: 'S' };
  sortKey: { name: string; type: 'S' };
  indexes: readonly IndexDefinition[];
  /** The TTL attribute (epoch seconds). */
  timeToLiveAttribute: string;
}

/** A global secondary index keyed by the string attribute `partitionKey`, sorted by `sortKey` (name, type). */
function index(
  name: string,
  partitionKey: string,
  [sortKey, sortType]: readonly [string, 'S' | 'N'],
  projection: IndexProjection,
): IndexDefinition {
  return {
    name,
    partitionKey: { name: partitionKey, type: 'S' },
    sortKey: { name: sortKey, type: sortType },
    projection,
  };
}

/**
 * The app record table.
 *
 * @example
 * ```ts
 * // in a CDK stack (aws-cdk-lib/aws-dynamodb)
 * const type = (t: 'S' | 'N') => (t === 'S' ? AttributeType.STRING : AttributeType.NUMBER);
 * new TableV2(this, 'Apps', {
 *   partitionKey: { name: APP_TABLE.partitionKey.name, type: AttributeType.STRING },
 *   sortKey: { name: APP_TABLE.sortKey.name, type: AttributeType.STRING },
 *   timeToLiveAttribute: APP_TABLE.timeToLiveAttribute,
 *   globalSecondaryIndexes: APP_TABLE.indexes.map((index) => ({
 *     indexName: index.name,
 *     partitionKey: { name: index.partitionKey.name, type: type(index.partitionKey.type) },
 *     sortKey: { name: index.sortKey.name, type: type(index.sortKey.type) },
 *     projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
 *   })),
 * });
 * ```
 */
export const APP_TABLE: TableDefinition = Object.freeze<TableDefinition>({
  partitionKey: { name: TABLE_ATTRIBUTES.partitionKey, type: 'S' },
  sortKey: { name: TABLE_ATTRIBUTES.sortKey, type: 'S' },
  indexes: Object.freeze([
    index(TABLE_INDEXES.byOwner, TABLE_ATTRIBUTES.ownerKey, [TABLE_ATTRIBUTES.createdKey, 'S'], 'ALL'),
    index(
      TABLE_INDEXES.byNativeName,
      TABLE_ATTRIBUTES.nativeKey,
      [TABLE_ATTRIBUTES.createdKey, 'S'],
      'KEYS_ONLY',
    ),
    index(TABLE_INDEXES.byActive, TABLE_ATTRIBUTES.activeKey, [TABLE_ATTRIBUTES.updatedAt, 'N'], 'ALL'),
    index(TABLE_INDEXES.byCreated, TABLE_ATTRIBUTES.allKey, [TABLE_ATTRIBUTES.createdKey, 'S'], 'ALL'),
  ]),
  timeToLiveAttribute: TABLE_ATTRIBUTES.expiresAt,
});

/**
 * The CreateTable request for the app record table (on-demand billing). Local mode and tests create the
 * table from it; TTL is a separate call ({@link updateTimeToLiveInput}).
 *
 * @example
 * ```ts
 * await client.send(new CreateTableCommand(createTableInput('txs-apps')));
 * ```
 */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const attributeTypes = new Map<string, 'S' | 'N'>([
    [APP_TABLE.partitionKey.name, APP_TABLE.partitionKey.type],
    [APP_TABLE.sortKey.name, APP_TABLE.sortKey.type],
  ]);
  for (const index of APP_TABLE.indexes) {
    attributeTypes.set(index.partitionKey.name, index.partitionKey.type);
    attributeTypes.set(index.sortKey.name, index.sortKey.type);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributeTypes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType,
    })),
    KeySchema: [
      { AttributeName: APP_TABLE.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: APP_TABLE.sortKey.name, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: APP_TABLE.indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: index.projection },
    })),
  };
}

/**
 * The UpdateTimeToLive request that turns on expiry of finished records and old idempotency reservations
 * (not supported by dynalite; the CDK stack sets `timeToLiveAttribute` instead).
 */
export function updateTimeToLiveInput(tableName: string): UpdateTimeToLiveCommandInput {
  return {
    TableName: tableName,
    TimeToLiveSpecification: { AttributeName: APP_TABLE.timeToLiveAttribute, Enabled: true },
  };
}
