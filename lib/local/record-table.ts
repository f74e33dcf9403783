/**
 * The app record table of the local server: created from `lib/store/table.ts` where it is missing (the
 * embedded dynalite's first start, or an external DynamoDB such as moto's), given the indexes added since when
 * a data directory from an older version lacks them, and waited for until it is ACTIVE.
 *
 * @module
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../store/index.js';

/** Seconds to wait for the table to become ACTIVE. */
const ACTIVE_WITHIN_MS = 30_000;

/**
 * Makes sure `tableName` exists with every index, and is ACTIVE, through `client` (the same region and
 * credentials the container's store uses: a DynamoDB that keeps tables per region, such as moto or DynamoDB
 * Local, must see the table where the store looks for it).
 *
 * @throws Error when the table is not ACTIVE within 30 s, or DynamoDB's error when it cannot be created.
 */
export async function ensureRecordTable(tableName: string, client: DynamoDBClient): Promise<void> {
  const describe = () => client.send(new DescribeTableCommand({ TableName: tableName }));
  const wanted = createTableInput(tableName);
  try {
    const { Table } = await describe();
    // A data dir from an older version may lack an index added since (e.g. byCreated): add it.
    const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    for (const index of wanted.GlobalSecondaryIndexes ?? []) {
      if (present.has(index.IndexName)) continue;
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: wanted.AttributeDefinitions,
          GlobalSecondaryIndexUpdates: [{ Create: index }],
        }),
      );
    }
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
    await client.send(new CreateTableCommand(wanted));
  }
  // dynalite serves a new or changed table once it is ACTIVE again (a timer later).
  const deadline = Date.now() + ACTIVE_WITHIN_MS;
  for (let delay = 10; ; delay = Math.min(100, delay * 2)) {
    const { Table } = await describe();
    const indexes = Table?.GlobalSecondaryIndexes ?? [];
    if (Table?.TableStatus === 'ACTIVE' && indexes.every((i) => (i.IndexStatus ?? 'ACTIVE') === 'ACTIVE'))
      return;
    if (Date.now() > deadline)
      throw new Error(`DynamoDB table '${tableName}' did not become ACTIVE within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
